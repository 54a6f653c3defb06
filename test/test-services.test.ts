// scripts/test-services.mjs, which `make test` runs before vitest: on ports where nothing listens it starts a private
// PostgreSQL and Redis that the clients the project uses connect to, and stops them; where something listens it
// starts nothing and points the tests there.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { isListening, startTestServices, type TestServices } from '../scripts/test-services.mjs';
import { tempDir } from './harness.js';

async function listen(): Promise<Server> {
  const srv = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return srv;
}

const portOf = (srv: Server): number => (srv.address() as { port: number }).port;

/** A port nothing listens on (it was free a moment ago). */
async function freePort(): Promise<number> {
  const srv = await listen();
  const port = portOf(srv);
  await new Promise((r) => srv.close(r));
  return port;
}

const root = tempDir('parlance-test-services-');
let services: TestServices | undefined;
afterAll(async () => {
  await services?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('the test services script', () => {
  it('starts a private PostgreSQL and Redis on free ports, both answer, and stop() ends them', async () => {
    const [pgPort, redisPort] = [await freePort(), await freePort()];
    const lines: string[] = [];
    services = await startTestServices({
      root,
      env: { PATH: process.env.PATH, PARLANCE_TEST_PG_PORT: String(pgPort), PARLANCE_TEST_REDIS_PORT: String(redisPort) },
      log: (line) => lines.push(line),
    });
    expect(services.started).toEqual(['PostgreSQL', 'Redis']);
    expect(services.env).toMatchObject({
      PARLANCE_TEST_PG_URL: `postgres://postgres@127.0.0.1:${pgPort}/postgres`,
      PARLANCE_TEST_REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    });
    expect(lines.join('\n')).toMatch(/starting a private cluster/);

    const client = new pg.Client({ connectionString: services.env.PARLANCE_TEST_PG_URL });
    await client.connect();
    try {
      // The tests make a database each: the cluster's postgres role (trust auth) may.
      await client.query('CREATE DATABASE parlance_services_check');
      const { rows } = await client.query<{ user: string; fsync: string }>("SELECT current_user AS user, current_setting('fsync') AS fsync");
      expect(rows[0]).toEqual({ user: 'postgres', fsync: 'off' });
    } finally {
      await client.end();
    }

    const redis = new Redis(services.env.PARLANCE_TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
    try {
      await redis.set('parlance:check', '1');
      expect(await redis.get('parlance:check')).toBe('1');
      // Nothing kept on disk: no RDB snapshots, no append-only file.
      expect(await redis.config('GET', 'save')).toEqual(['save', '']);
      expect(await redis.config('GET', 'appendonly')).toEqual(['appendonly', 'no']);
    } finally {
      redis.disconnect();
    }

    await services.stop();
    expect(await isListening(pgPort)).toBe(false);
    expect(await isListening(redisPort)).toBe(false);
    // The data is gone, the logs stay.
    expect(readdirSync(path.join(root, 'build', 'test-services')).sort()).toEqual([`postgres-${pgPort}.log`, `redis-${redisPort}.log`]);
  }, 60_000);

  it('starts nothing where something already listens, and leaves URLs given outright alone', async () => {
    const pgSrv = await listen();
    const redisSrv = await listen();
    const [pgPort, redisPort] = [portOf(pgSrv), portOf(redisSrv)];
    try {
      const s = await startTestServices({
        root,
        env: { PATH: process.env.PATH, PARLANCE_TEST_PG_PORT: String(pgPort), PARLANCE_TEST_REDIS_PORT: String(redisPort) },
        log: () => undefined,
      });
      expect(s.started).toEqual([]);
      expect(s.env).toMatchObject({
        PARLANCE_TEST_PG_URL: `postgres://postgres@127.0.0.1:${pgPort}/postgres`,
        PARLANCE_TEST_REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      });
      await s.stop();

      const given = { PARLANCE_TEST_PG_URL: 'postgres://someone@db.invalid:1/x', PARLANCE_TEST_REDIS_URL: 'redis://cache.invalid:1' };
      const t = await startTestServices({ root, env: { PATH: process.env.PATH, ...given }, log: () => undefined });
      expect(t.started).toEqual([]);
      expect(t.env).toMatchObject(given);
    } finally {
      pgSrv.close();
      redisSrv.close();
    }
    expect(existsSync(path.join(root, 'build', 'test-services', `postgres-${pgPort}`))).toBe(false);
  });
});
