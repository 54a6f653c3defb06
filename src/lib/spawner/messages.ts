// Messages between the server and its spawner process (spawner-process.ts), over the fork's IPC channel.
export type StdioMode = 'pipe' | 'ignore';

export interface SpawnRequest {
  op: 'spawn';
  id: number;
  command: string;
  args: string[];
  stdio: [StdioMode, StdioMode, StdioMode];
  env?: Record<string, string | undefined>;
  cwd?: string;
  detached?: boolean;
  /** OS niceness set on the child right after it starts (lib/priority.ts). */
  nice?: number;
}

export type ToSpawner = SpawnRequest;

/**
 * What the spawner reports of one child, in this order: `started` (then one `stdio` message per piped stream, the
 * pipe's handle attached), `exit`; or `failed` when it could not start (no such command, ...).
 */
export type FromSpawner =
  | { op: 'started'; id: number; pid: number }
  | { op: 'stdio'; id: number; fd: 0 | 1 | 2 }
  | { op: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null }
  | { op: 'failed'; id: number; code: string | undefined; message: string };
