import type { CommandSpec } from '../types.js';
import { initCommand } from './init.js';
import { runCommand } from './run.js';
import { statusCommand } from './status.js';
import { verifyCommand } from './verify.js';
import { alertsCommand, whyCommand } from './alerts.js';
import { historyCommand } from './history.js';
import { applyCommand } from './apply.js';
import { editCommand } from './edit.js';
import { rmCommand } from './rm.js';
import { credCommand } from './cred.js';
import { approveCommand, denyCommand } from './approve.js';
import { acceptCommand } from './accept.js';
import { notifyTestCommand } from './notify-test.js';
import { installUnitsCommand } from './install-units.js';
import { checkCommand } from './check.js';
import { explainCommand } from './explain.js';

/** Every command of SPEC §10. Each lives in its own module beside this file. */
export const commands: CommandSpec[] = [
  initCommand,
  runCommand,
  statusCommand,
  verifyCommand,
  alertsCommand,
  whyCommand,
  historyCommand,
  editCommand,
  applyCommand,
  rmCommand,
  credCommand,
  approveCommand,
  denyCommand,
  acceptCommand,
  checkCommand,
  explainCommand,
  notifyTestCommand,
  installUnitsCommand,
];
