import type { CommandSpec } from '../types.js';
import { notifyTestCommand } from './notify-test.js';
import { installUnitsCommand } from './install-units.js';
import { checkCommand } from './check.js';
import { explainCommand } from './explain.js';

/** Every command of SPEC §10. Each lives in its own module beside this file. */
export const commands: CommandSpec[] = [
  notifyTestCommand,
  checkCommand,
  explainCommand,
  installUnitsCommand,
];
