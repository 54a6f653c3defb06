// Types of scripts/test-services.mjs for the TypeScript that imports it (test/test-services.test.ts).

export interface TestServices {
  /** PARLANCE_TEST_PG_URL and PARLANCE_TEST_REDIS_URL for the tests, and PATH when PostgreSQL's tools are off it. */
  env: { PARLANCE_TEST_PG_URL: string; PARLANCE_TEST_REDIS_URL: string; PATH?: string };
  /** What this call started ('PostgreSQL', 'Redis'); empty when both already listened. */
  started: string[];
  /** Stop what was started and remove its data (the logs stay); safe to call again. */
  stop(): Promise<void>;
}

export function isListening(port: number, timeoutMs?: number): Promise<boolean>;

export function startTestServices(opts?: { env?: Record<string, string | undefined>; root?: string; log?: (line: string) => void }): Promise<TestServices>;
