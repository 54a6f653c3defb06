import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadSettings, rateLimitOf, settingDefs, settingsMarkdownTable } from './settings.js';

const tmp = mkdtempSync(path.join(tmpdir(), 'parlance-settings-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

let fileCount = 0;
/** A real JSON config file with the given content (a string is written verbatim). */
function configFile(content: unknown): string {
  const file = path.join(tmp, `config-${++fileCount}.json`);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

/** The ConfigError that loading with these options throws (fails the test when none is thrown). */
function configError(opts: Parameters<typeof loadSettings>[0]): ConfigError {
  try {
    loadSettings(opts);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected loadSettings to throw ConfigError');
}

describe('loadSettings defaults', () => {
  it('gives every setting its default when nothing is set', () => {
    const s = loadSettings({ env: {} });
    for (const [key, def] of Object.entries(settingDefs)) {
      if (key === 'dataDir' || key === 'modelsDir') continue;
      expect(s[key as keyof typeof s], key).toEqual(def.default);
    }
    // Paths are resolved: the models directory defaults to the data directory's models/ folder.
    expect(s.modelsDir).toBe(path.join(s.dataDir, 'models'));
    expect(loadSettings({ env: { PARLANCE_MODELS_DIR: 'm' } }).modelsDir).toBe(path.resolve('m'));
  });

  it('has the documented embedded defaults', () => {
    const s = loadSettings({ env: {} });
    expect(s.port).toBe(8080);
    expect(s.host).toBe('0.0.0.0');
    expect(s.compat).toBe('spec');
    expect(s.environment).toBe('production');
    expect(s.databaseUrl).toBe('');
    expect(s.redisUrl).toBe('');
    expect(s.allowPrivateHosts).toEqual([]);
    expect(s.trustProxy).toBe(false);
    expect(s.logLevel).toBe('info');
  });

  it('resolves the data directory to an absolute path (default ./.data)', () => {
    expect(loadSettings({ env: {} }).dataDir).toBe(path.resolve('.data'));
    expect(loadSettings({ env: { PARLANCE_DATA_DIR: 'some/dir' } }).dataDir).toBe(path.resolve('some/dir'));
    expect(loadSettings({ env: {}, overrides: { dataDir: '/srv/parlance' } }).dataDir).toBe('/srv/parlance');
  });

  it('does not read process.env when an env object is given', () => {
    const saved = process.env.PARLANCE_PORT;
    process.env.PARLANCE_PORT = '1234';
    try {
      expect(loadSettings({ env: {} }).port).toBe(8080);
      expect(loadSettings().port).toBe(1234);
    } finally {
      if (saved === undefined) delete process.env.PARLANCE_PORT;
      else process.env.PARLANCE_PORT = saved;
    }
  });
});

describe('loadSettings precedence: default < config file < environment < overrides', () => {
  const file = () => configFile({ port: 1001, host: '127.0.0.2', logLevel: 'warn', environment: 'staging' });
  const env = { PARLANCE_PORT: '2002', PARLANCE_LOG_LEVEL: 'error', PARLANCE_ENVIRONMENT: 'env-environment' };

  it('config file beats the default', () => {
    const s = loadSettings({ env: {}, configFile: file() });
    expect(s.port).toBe(1001);
    expect(s.host).toBe('127.0.0.2');
    expect(s.logLevel).toBe('warn');
    expect(s.compat).toBe('spec');
  });

  it('environment beats the config file', () => {
    const s = loadSettings({ env, configFile: file() });
    expect(s.port).toBe(2002);
    expect(s.logLevel).toBe('error');
    expect(s.environment).toBe('env-environment');
    expect(s.host).toBe('127.0.0.2');
  });

  it('overrides (CLI flags) beat the environment', () => {
    const s = loadSettings({ env, configFile: file(), overrides: { port: '3003', environment: 'flag-environment' } });
    expect(s.port).toBe(3003);
    expect(s.environment).toBe('flag-environment');
    expect(s.logLevel).toBe('error');
    expect(s.host).toBe('127.0.0.2');
  });

  it('an undefined override leaves the lower layers in force', () => {
    const s = loadSettings({ env, configFile: file(), overrides: { port: undefined } });
    expect(s.port).toBe(2002);
  });

  it('reads the config file named by PARLANCE_CONFIG when no configFile is given', () => {
    const s = loadSettings({ env: { PARLANCE_CONFIG: configFile({ port: 4004 }) } });
    expect(s.port).toBe(4004);
  });
});

describe('config file', () => {
  it('accepts camelCase keys', () => {
    const s = loadSettings({
      env: {},
      configFile: configFile({ port: 9001, trustProxy: true, compat: 'soniox-sdk', allowPrivateHosts: ['127.0.0.1', '10.0.0.0/8'], filesTotalSizeGbOrg: 2.5 }),
    });
    expect(s.port).toBe(9001);
    expect(s.trustProxy).toBe(true);
    expect(s.compat).toBe('soniox-sdk');
    expect(s.allowPrivateHosts).toEqual(['127.0.0.1', '10.0.0.0/8']);
    expect(s.filesTotalSizeGbOrg).toBe(2.5);
  });

  it('accepts environment variable names as keys', () => {
    const s = loadSettings({
      env: {},
      configFile: configFile({
        PARLANCE_PORT: 9002,
        PARLANCE_TRUST_PROXY: 'yes',
        DATABASE_URL: 'postgres://db.example/parlance',
        PARLANCE_ALLOW_PRIVATE_HOSTS: '127.0.0.1, 10.0.0.0/8',
        PARLANCE_RATE_FILES_ORG_PER_MIN: 7,
      }),
    });
    expect(s.port).toBe(9002);
    expect(s.trustProxy).toBe(true);
    expect(s.databaseUrl).toBe('postgres://db.example/parlance');
    expect(s.allowPrivateHosts).toEqual(['127.0.0.1', '10.0.0.0/8']);
    expect(rateLimitOf(s, 'files', 'organization')).toBe(7);
  });

  it('rejects an unknown key, naming it', () => {
    const err = configError({ env: {}, configFile: configFile({ port: 8081, prot: 8082 }) });
    expect(err.message).toContain('"prot"');
  });

  it('rejects a file that is not valid JSON', () => {
    expect(configError({ env: {}, configFile: configFile('{"port": 80,') }).message).toMatch(/cannot read config file/);
  });

  it('rejects a file that is not a JSON object', () => {
    expect(configError({ env: {}, configFile: configFile([1, 2]) }).message).toMatch(/JSON object/);
    expect(configError({ env: {}, configFile: configFile('null') }).message).toMatch(/JSON object/);
  });

  it('rejects a missing file', () => {
    expect(configError({ env: {}, configFile: path.join(tmp, 'does-not-exist.json') }).message).toMatch(/cannot read config file/);
  });

  it('reports a bad value from the file with the variable name', () => {
    expect(configError({ env: {}, configFile: configFile({ port: 'eighty' }) }).message).toContain('PARLANCE_PORT');
  });
});

describe('value parsing', () => {
  it.each([
    ['PARLANCE_PORT', 'abc'],
    ['PARLANCE_PORT', ''],
    ['PARLANCE_PORT', '80.5'],
    ['PARLANCE_PORT', '-1'],
    ['PARLANCE_JSON_BODY_LIMIT_BYTES', '100'],
    ['PARLANCE_RATE_TTS_PROJECT_PER_MIN', 'many'],
    ['PARLANCE_FILES_TOTAL_SIZE_GB_ORG', 'lots'],
  ])('rejects %s=%j as a number', (name, value) => {
    expect(configError({ env: { [name]: value } }).message).toContain(name);
  });

  it.each([
    ['PARLANCE_COMPAT', 'soniox'],
    ['PARLANCE_COMPAT', 'SPEC'],
    ['PARLANCE_LOG_LEVEL', 'verbose'],
  ])('rejects %s=%j, listing the allowed values', (name, value) => {
    const err = configError({ env: { [name]: value } });
    expect(err.message).toContain(name);
    expect(err.message).toContain(value);
  });

  it('names the allowed values of an enum', () => {
    expect(configError({ env: { PARLANCE_COMPAT: 'x' } }).message).toMatch(/spec, soniox-sdk/);
  });

  it.each(['maybe', '2', 'enabled'])('rejects PARLANCE_TRUST_PROXY=%j as a boolean', (value) => {
    expect(configError({ env: { PARLANCE_TRUST_PROXY: value } }).message).toContain('PARLANCE_TRUST_PROXY');
  });

  it.each([
    ['1', true],
    ['true', true],
    ['YES', true],
    ['on', true],
    ['0', false],
    ['false', false],
    ['no', false],
    ['off', false],
    ['', false],
  ])('parses PARLANCE_TRUST_PROXY=%j as %s', (value, expected) => {
    expect(loadSettings({ env: { PARLANCE_TRUST_PROXY: value } }).trustProxy).toBe(expected);
  });

  it('parses integers and decimals', () => {
    const s = loadSettings({ env: { PARLANCE_PORT: ' 0 ', PARLANCE_FILES_TOTAL_SIZE_GB_PROJECT: '0.5', PARLANCE_RATE_MODELS_ORG_PER_MIN: '0' } });
    expect(s.port).toBe(0);
    expect(s.filesTotalSizeGbProject).toBe(0.5);
    expect(rateLimitOf(s, 'models', 'organization')).toBe(0);
  });

  it('parses PARLANCE_ALLOW_PRIVATE_HOSTS as a comma-separated list', () => {
    expect(loadSettings({ env: { PARLANCE_ALLOW_PRIVATE_HOSTS: '127.0.0.1, 10.0.0.0/8' } }).allowPrivateHosts).toEqual(['127.0.0.1', '10.0.0.0/8']);
    expect(loadSettings({ env: { PARLANCE_ALLOW_PRIVATE_HOSTS: ' localhost ,, ::1/128 ,' } }).allowPrivateHosts).toEqual(['localhost', '::1/128']);
    expect(loadSettings({ env: { PARLANCE_ALLOW_PRIVATE_HOSTS: '' } }).allowPrivateHosts).toEqual([]);
  });

  it('reads the per-category rate limits per organization and per project', () => {
    const s = loadSettings({ env: { PARLANCE_RATE_FILES_PROJECT_PER_MIN: '5', PARLANCE_RATE_TTS_ORG_PER_MIN: '9' } });
    expect(rateLimitOf(s, 'files', 'project')).toBe(5);
    expect(rateLimitOf(s, 'files', 'organization')).toBe(3000);
    expect(rateLimitOf(s, 'tts', 'organization')).toBe(9);
  });
});

describe('settings table of docs/guide/configuration.md', () => {
  const pageName = 'docs/guide/configuration.md';
  const page = readFileSync(path.resolve(import.meta.dirname, '..', '..', pageName), 'utf8');
  const regenerate = 'regenerate it with `make settings-table` (node --import tsx scripts/update-settings-table.mjs)';

  it("names every setting's environment variable", () => {
    const missing = Object.values(settingDefs)
      .map((d) => d.env)
      .filter((env) => !page.includes(`\`${env}\``));
    expect(missing, `${pageName} lacks these settings; ${regenerate}`).toEqual([]);
  });

  it('holds exactly the generated table between the markers', () => {
    const starts = page.split('<!-- settings:start -->').length - 1;
    expect(starts, `${pageName} must have exactly one <!-- settings:start --> marker`).toBe(1);
    const m = /<!-- settings:start -->\n([\s\S]*?)\n<!-- settings:end -->/.exec(page);
    expect(m, `${pageName} must hold <!-- settings:start --> ... <!-- settings:end --> on their own lines`).not.toBeNull();
    expect(m![1], `${pageName}: the settings table is stale; ${regenerate}`).toBe(settingsMarkdownTable());
  });
});
