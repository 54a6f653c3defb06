import { spawn } from 'node:child_process';
import { getPriority } from 'node:os';
import { describe, expect, it } from 'vitest';
import { BATCH_NICE, lowerProcessPriority, INTERACTIVE_NICE } from './priority.js';

describe('priorities', () => {
  it('ranks speech above batch work, both below the server (nice 0)', () => {
    expect(INTERACTIVE_NICE).toBeGreaterThan(0);
    expect(BATCH_NICE).toBeGreaterThan(INTERACTIVE_NICE);
  });

  it('lowers a child process, and ignores one that has exited', async () => {
    const child = spawn('sleep', ['5']);
    try {
      lowerProcessPriority(child.pid, INTERACTIVE_NICE);
      expect(getPriority(child.pid!)).toBe(INTERACTIVE_NICE);
    } finally {
      child.kill('SIGKILL');
    }
    await new Promise((r) => child.once('exit', r));
    expect(() => lowerProcessPriority(child.pid, BATCH_NICE)).not.toThrow();
    expect(() => lowerProcessPriority(undefined, BATCH_NICE)).not.toThrow();
  });
});
