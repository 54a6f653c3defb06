// The package's own version (package.json), read once: the CLI's --version and Wyoming's `info` artifacts.
import { readFileSync } from 'node:fs';

let version: string | undefined;

export function packageVersion(): string {
  if (version === undefined) {
    try {
      version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
    } catch {
      version = '0.0.0';
    }
  }
  return version;
}
