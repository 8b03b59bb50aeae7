/** Which channels warden.toml configures, and how to build them. */
import type { WardenConfig } from '../config/warden-config.js';
import { DeliveryError, type Channel } from './channel.js';
import type { ChannelName } from './delivery-state.js';
import { DesktopChannel } from './desktop.js';
import { DiscordChannel } from './discord.js';

/** A configured channel that cannot work (e.g. Discord without owner.discord_id). */
class BrokenChannel implements Channel {
  readonly limit = 2000;
  constructor(readonly name: ChannelName, private reason: string) {}
  send(): Promise<void> { return Promise.reject(new DeliveryError(this.reason, 'config')); }
}

/** The channels warden.toml asks for, with a signature that changes when their settings do. */
export function channelSpecs(root: string, config: WardenConfig): { name: ChannelName; signature: string; make(): Channel }[] {
  const out: { name: ChannelName; signature: string; make(): Channel }[] = [];
  const d = config.notify.discord;
  if (d) {
    const owner = config.owner?.discord_id;
    out.push({
      name: 'discord',
      signature: JSON.stringify([d.token_file, d.api ?? null, owner ?? null]),
      make: () => owner
        ? new DiscordChannel({ recipientId: owner, tokenFile: d.token_file, api: d.api, root })
        : new BrokenChannel('discord', '[notify.discord] is set but owner.discord_id is missing in warden.toml'),
    });
  }
  if (config.notify.desktop?.enabled) out.push({ name: 'desktop', signature: 'desktop', make: () => new DesktopChannel() });
  return out;
}
