// The admin CLI and first start, black-box: `parlance admin ...` and `parlance serve` as an operator runs them.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, runCli, startParlance, tempDir } from '../harness.js';

const dirs: string[] = [];
function freshDir(): string {
  const d = tempDir('parlance-cli-');
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

// Servers started here load speech models on first use, as the harness's do (none of these tests uses one).
const env = { PARLANCE_LOG_LEVEL: 'warn', PARLANCE_STT_PRELOAD: '0' };
const admin = (dir: string, ...args: string[]) => runCli(['admin', ...args, '--data-dir', dir, '--json'], env);
const adminHuman = (dir: string, ...args: string[]) => runCli(['admin', ...args, '--data-dir', dir], env);

async function adminJson<T = Record<string, unknown>>(dir: string, ...args: string[]): Promise<T> {
  const r = await admin(dir, ...args);
  expect(r.code, `admin ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout) as T;
}

interface Bootstrap {
  organization_id: string;
  project_id: string;
  api_key: string;
}
interface IssuedKey {
  id: string;
  api_key: string;
  key_prefix: string;
}
interface KeyRecord {
  id: string;
  project_id: string;
  key_prefix: string;
  revoked_at: string | null;
  permissions: string[];
  [k: string]: unknown;
}

/** `parlance serve --port 0` on `dir`: everything it printed to stdout until it listened, and a stop(). */
async function serve(dir: string): Promise<{ stdout: string; url: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dir], { env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${stdout} ${stderr}`)), 30_000);
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      const m = /Parlance listening on (http:\/\/\S+)/.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}: ${stdout} ${stderr}`));
    });
  });
  return {
    stdout,
    url,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

const countWith = (url: string, key: string) => fetch(`${url}/v1/files/count`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status);

describe('admin bootstrap', () => {
  let dir: string;
  let first: Bootstrap;

  beforeAll(async () => {
    dir = freshDir();
    first = await adminJson<Bootstrap>(dir, 'bootstrap');
  });

  it('on an empty data dir prints exactly {organization_id, project_id, api_key}', () => {
    expect(Object.keys(first).sort()).toEqual(['api_key', 'organization_id', 'project_id']);
    expect(first.api_key).toMatch(/^prl_[A-Za-z0-9_-]+$/);
    expect(first.organization_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.project_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('a second bootstrap reuses the organization and project and issues a new key; both keys work', async () => {
    const second = await adminJson<Bootstrap>(dir, 'bootstrap');
    expect(second.organization_id).toBe(first.organization_id);
    expect(second.project_id).toBe(first.project_id);
    expect(second.api_key).not.toBe(first.api_key);
    const projects = await adminJson<{ projects: { id: string }[] }>(dir, 'list-projects');
    expect(projects.projects.map((p) => p.id)).toEqual([first.project_id]);
    const s = await serve(dir);
    try {
      expect(s.stdout).not.toMatch(/api_key/);
      expect(await countWith(s.url, first.api_key)).toBe(200);
      expect(await countWith(s.url, second.api_key)).toBe(200);
    } finally {
      await s.stop();
    }
  });

  it('prints a human-readable form without --json', async () => {
    const r = await adminHuman(dir, 'bootstrap');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/api_key:\s+prl_/);
    expect(() => JSON.parse(r.stdout)).toThrow();
  });
});

describe('projects and keys', () => {
  let dir: string;
  let boot: Bootstrap;

  beforeAll(async () => {
    dir = freshDir();
    boot = await adminJson<Bootstrap>(dir, 'bootstrap');
  });

  it('create-project --name --region prints the project, and list-projects shows it', async () => {
    const p = await adminJson<{ id: string; name: string; region: string; description: string; created_at: string }>(
      dir,
      'create-project',
      '--name',
      'Mobile app',
      '--region',
      'eu',
      '--description',
      'iOS and Android',
    );
    expect(p).toMatchObject({ name: 'Mobile app', region: 'eu', description: 'iOS and Android' });
    expect(p.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(p.id).not.toBe(boot.project_id);
    expect(Number.isNaN(Date.parse(p.created_at))).toBe(false);
    const list = await adminJson<{ projects: { id: string; name: string }[] }>(dir, 'list-projects');
    expect(list.projects.map((x) => x.id)).toEqual(expect.arrayContaining([boot.project_id, p.id]));
  });

  it('create-project without --name fails with a non-zero exit', async () => {
    const r = await admin(dir, 'create-project');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/--name/);
  });

  it('create-project on a data dir without an organization fails with a message', async () => {
    const r = await admin(freshDir(), 'create-project', '--name', 'x');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/bootstrap/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('create-key prints exactly {id, api_key, key_prefix}, and api_key starts with key_prefix', async () => {
    const k = await adminJson<IssuedKey>(dir, 'create-key', '--project', boot.project_id, '--name', 'ci');
    expect(Object.keys(k).sort()).toEqual(['api_key', 'id', 'key_prefix']);
    expect(k.api_key.startsWith(k.key_prefix)).toBe(true);
    expect(k.key_prefix.length).toBeLessThan(k.api_key.length);
    expect(k.key_prefix).toMatch(/^prl_/);
  });

  it('create-key with an unknown --permission fails with a non-zero exit and names it', async () => {
    const r = await admin(dir, 'create-key', '--project', boot.project_id, '--permission', 'files:write', 'files:admin');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/files:admin/);
    expect(r.stdout).not.toMatch(/prl_/);
  });

  it('create-key for an unknown project fails with a non-zero exit', async () => {
    const r = await admin(dir, 'create-key', '--project', '00000000-0000-4000-8000-000000000000');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/no such project/);
  });

  it('create-key --permission and --read-only store what was asked', async () => {
    const k = await adminJson<IssuedKey>(dir, 'create-key', '--project', boot.project_id, '--permission', 'stt_rt:write', 'temporary_api_keys:write');
    const ro = await adminJson<IssuedKey>(dir, 'create-key', '--project', boot.project_id, '--read-only');
    const { api_keys } = await adminJson<{ api_keys: KeyRecord[] }>(dir, 'list-keys');
    expect(api_keys.find((x) => x.id === k.id)?.permissions.sort()).toEqual(['stt_rt:write', 'temporary_api_keys:write']);
    const roPerms = api_keys.find((x) => x.id === ro.id)!.permissions;
    expect(roPerms.length).toBeGreaterThan(0);
    for (const p of roPerms) expect(p).toMatch(/:read$/);
  });

  it('list-keys never prints a secret or its hash, in JSON or human form', async () => {
    const k = await adminJson<IssuedKey>(dir, 'create-key', '--project', boot.project_id, '--name', 'secret-check');
    const hash = createHash('sha256').update(k.api_key).digest('hex');
    for (const r of [await admin(dir, 'list-keys'), await adminHuman(dir, 'list-keys')]) {
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(k.key_prefix);
      expect(r.stdout).not.toContain(k.api_key);
      expect(r.stdout).not.toContain(k.api_key.slice(k.key_prefix.length));
      expect(r.stdout).not.toContain(hash);
      expect(r.stdout).not.toContain(boot.api_key);
    }
    const { api_keys } = JSON.parse((await admin(dir, 'list-keys')).stdout) as { api_keys: KeyRecord[] };
    for (const rec of api_keys) {
      expect(rec).not.toHaveProperty('key_hash');
      expect(rec).not.toHaveProperty('api_key');
    }
  });

  it('list-keys shows revoked_at after revoke-key, and --project filters', async () => {
    const k = await adminJson<IssuedKey>(dir, 'create-key', '--project', boot.project_id, '--name', 'to-revoke');
    const before = await adminJson<{ api_keys: KeyRecord[] }>(dir, 'list-keys');
    expect(before.api_keys.find((x) => x.id === k.id)?.revoked_at).toBeNull();
    const r = await adminJson<{ id: string; revoked: boolean }>(dir, 'revoke-key', k.id);
    expect(r).toEqual({ id: k.id, revoked: true });
    const after = await adminJson<{ api_keys: KeyRecord[] }>(dir, 'list-keys');
    const rec = after.api_keys.find((x) => x.id === k.id);
    expect(rec?.revoked_at).toEqual(expect.any(String));
    expect(Number.isNaN(Date.parse(rec!.revoked_at!))).toBe(false);
    // Other keys stay active.
    expect(after.api_keys.filter((x) => x.id !== k.id && x.revoked_at !== null)).toEqual([]);
    const human = await adminHuman(dir, 'list-keys');
    expect(human.stdout).toMatch(new RegExp(`${k.id}.*revoked`));

    const other = await adminJson<{ id: string }>(dir, 'create-project', '--name', 'filter-check');
    const otherKey = await adminJson<IssuedKey>(dir, 'create-key', '--project', other.id);
    const filtered = await adminJson<{ api_keys: KeyRecord[] }>(dir, 'list-keys', '--project', other.id);
    expect(filtered.api_keys.map((x) => x.id)).toEqual([otherKey.id]);
  }, 60_000);

  it('revoke-key of an unknown id fails with a non-zero exit and a message', async () => {
    const r = await admin(dir, 'revoke-key', '00000000-0000-4000-8000-000000000000');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/no such key/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('revoke-key of an already revoked key fails with a non-zero exit', async () => {
    const k = await adminJson<IssuedKey>(dir, 'create-key', '--project', boot.project_id);
    await adminJson(dir, 'revoke-key', k.id);
    const r = await admin(dir, 'revoke-key', k.id);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/already revoked/);
  });
});

describe('an unusable data directory', () => {
  it('serve and admin exit 2 with one line naming the directory and why (issue 22 D8)', async () => {
    const dir = freshDir();
    const blocker = `${dir}/not-a-dir`;
    writeFileSync(blocker, '');
    // A file where the directory should be, a directory under a file, and a place no directory can be made (/proc).
    for (const [bad, why] of [
      [blocker, 'a file is in the way'],
      [`${blocker}/sub`, 'a file is in the way'],
      ['/proc/parlance-data', 'cannot be created'],
    ] as const) {
      for (const args of [
        ['serve', '--port', '0', '--data-dir', bad],
        ['admin', 'bootstrap', '--data-dir', bad, '--json'],
      ]) {
        const r = await runCli(args, env);
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
        const lines = r.stderr.trim().split('\n');
        expect(lines).toHaveLength(1);
        expect(lines[0]).toContain(`data directory ${bad} is not usable: `);
        expect(lines[0]).toContain(why);
        expect(r.stderr).not.toMatch(/\n\s+at /);
        expect(r.stdout).toBe('');
      }
    }
  }, 60_000);
});

describe('parlance serve: first start and restart', () => {
  it('prints a key once on an empty data dir; a restart prints none, and the first key still works', async () => {
    const dir = freshDir();
    const first = await startParlance({ dataDir: dir, env });
    let firstKey: string;
    try {
      firstKey = first.apiKey;
      expect(firstKey).toMatch(/^prl_/);
      expect(await countWith(first.url, firstKey)).toBe(200);
      const { api_keys } = await adminJson<{ api_keys: KeyRecord[] }>(dir, 'list-keys');
      expect(api_keys).toHaveLength(1);
      expect(firstKey.startsWith(api_keys[0]!.key_prefix)).toBe(true);
    } finally {
      await first.stop();
    }

    const again = await serve(dir);
    try {
      expect(again.stdout).not.toMatch(/api_key/);
      expect(again.stdout).not.toMatch(/prl_/);
      expect(again.stdout).not.toMatch(/First start/);
      expect(await countWith(again.url, firstKey)).toBe(200);
      // The restart issued no key.
      const { api_keys } = await adminJson<{ api_keys: KeyRecord[] }>(dir, 'list-keys');
      expect(api_keys).toHaveLength(1);
    } finally {
      await again.stop();
    }
  }, 60_000);

  it('the first start prints the key exactly once, with the organization and project ids', async () => {
    const dir = freshDir();
    const s = await serve(dir);
    try {
      const keys = s.stdout.match(/prl_[A-Za-z0-9_-]+/g) ?? [];
      expect(keys).toHaveLength(1);
      expect(s.stdout).toMatch(/organization_id:\s+[0-9a-f-]{36}/);
      expect(s.stdout).toMatch(/project_id:\s+[0-9a-f-]{36}/);
      expect(await countWith(s.url, keys[0]!)).toBe(200);
    } finally {
      await s.stop();
    }
  });
});
