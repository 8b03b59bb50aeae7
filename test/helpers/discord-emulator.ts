/**
 * A tiny stand-in for Discord's REST API, driven through the real @discordjs/rest client.
 * Speaks POST /api/v10/users/@me/channels and POST /api/v10/channels/:id/messages, and can
 * answer 429 (Discord's headers and body), 500, 401, hold responses, or refuse connections.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string;
  path: string;
  auth: string | undefined;
  body: string;
  time: number;
  status: number;
  /** The response was fully written (the client saw the answer). */
  completed: boolean;
  /** The client went away before the answer (e.g. it was killed). */
  aborted: boolean;
}

export type Mode = 'ok' | '500' | '401';

export class DiscordEmulator {
  requests: Recorded[] = [];
  mode: Mode = 'ok';
  /** Answer the next N message posts with 429. */
  rateLimitNext = 0;
  /** X-RateLimit-Reset-After for those 429s, seconds. */
  rateLimitResetAfter = 1.5;
  /** Do not answer message posts until release() (to kill a client mid-delivery). */
  hold = false;
  token: string;
  private server: Server | null = null;
  private held: (() => void)[] = [];
  port = 0;

  constructor(token: string) { this.token = token; }

  get api(): string { return `http://127.0.0.1:${this.port}/api`; }

  /** Successful message posts, oldest first. */
  get messages(): (Recorded & { content: string })[] {
    return this.requests.filter((r) => r.path.endsWith('/messages') && r.status === 200 && r.completed)
      .map((r) => ({ ...r, content: String((JSON.parse(r.body) as { content?: unknown }).content ?? '') }));
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Close the port: new connections are refused until start() again (same port). */
  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    this.server = null;
    for (const h of this.held.splice(0)) h();
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  release(): void {
    this.hold = false;
    for (const h of this.held.splice(0)) h();
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rec: Recorded = {
        method: req.method ?? '', path: (req.url ?? '').split('?')[0]!, auth: req.headers.authorization,
        body: Buffer.concat(chunks).toString('utf8'), time: Date.now(), status: 0, completed: false, aborted: false,
      };
      this.requests.push(rec);
      res.on('finish', () => { rec.completed = true; });
      res.on('close', () => { if (!rec.completed) rec.aborted = true; });
      const answer = () => this.answer(rec, res);
      if (this.hold && rec.path.endsWith('/messages')) this.held.push(answer); else answer();
    });
  }

  private send(rec: Recorded, res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    rec.status = status;
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  }

  private answer(rec: Recorded, res: ServerResponse): void {
    if (rec.auth !== `Bot ${this.token}` || this.mode === '401') return this.send(rec, res, 401, { message: '401: Unauthorized', code: 0 });
    if (this.mode === '500') return this.send(rec, res, 500, { message: 'Internal Server Error', code: 0 });
    if (rec.method === 'POST' && rec.path === '/api/v10/users/@me/channels') {
      const { recipient_id } = JSON.parse(rec.body) as { recipient_id: string };
      return this.send(rec, res, 200, { id: `dm${recipient_id}`, type: 1, recipients: [{ id: recipient_id }] });
    }
    const m = /^\/api\/v10\/channels\/([^/]+)\/messages$/.exec(rec.path);
    if (rec.method === 'POST' && m) {
      if (this.rateLimitNext > 0) {
        this.rateLimitNext--;
        const after = this.rateLimitResetAfter;
        return this.send(rec, res, 429, { message: 'You are being rate limited.', retry_after: after, global: false }, {
          'retry-after': String(Math.ceil(after)),
          'x-ratelimit-limit': '5',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': String((Date.now() / 1000 + after).toFixed(3)),
          'x-ratelimit-reset-after': String(after),
          'x-ratelimit-bucket': 'emulated-bucket',
          'x-ratelimit-scope': 'user',
        });
      }
      return this.send(rec, res, 200, { id: String(this.requests.length), channel_id: m[1], content: '' }, {
        'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '4', 'x-ratelimit-reset-after': '0.1', 'x-ratelimit-bucket': 'emulated-bucket',
      });
    }
    this.send(rec, res, 404, { message: 'Unknown route', code: 0 });
  }
}
