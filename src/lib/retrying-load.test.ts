import { expect, it } from 'vitest';
import { RetryingLoad } from './retrying-load.js';

it('loads once for every use, forgets a failed load so the next use tries again, and hands the value over on take()', async () => {
  let opened = 0;
  let fail = true;
  const load = new RetryingLoad(async () => {
    opened++;
    if (fail) throw new Error(`load ${opened} failed`);
    return { n: opened };
  });
  await expect(load.get()).rejects.toThrow('load 1 failed');
  expect(load.loaded).toBe(false);
  fail = false;
  const pending = load.get();
  expect(load.loaded).toBe(false);
  const [a, b] = await Promise.all([pending, load.get()]);
  expect(a).toBe(b);
  expect(opened).toBe(2);
  expect(load.loaded).toBe(true);
  expect(await load.take()).toBe(a);
  expect(load.loaded).toBe(false);
  expect(await load.take()).toBeUndefined();
  expect((await load.get()).n).toBe(3);
  expect(load.loaded).toBe(true);
});
