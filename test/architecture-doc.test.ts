// docs/architecture.md is the map of the tree: every file or folder it names in backticks must exist, so a move or a
// rename that forgets the map fails here. A name is looked up as written (from the project root or from src/), and
// otherwise as the end of a path in the tree, since table rows and paragraphs name files within the folder they are
// about (`session.ts` in the row of `src/modules/realtime/`). `<feature>` stands for one folder and `*` for any part
// of a name. URL paths (`/v1/...`) and words without a file extension or trailing slash are not paths.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'dist-console', 'build', 'coverage', 'results']);

function treePaths(): string[] {
  const out: string[] = [];
  const walk = (dir: string, rel: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (SKIP_DIRS.has(entry.name)) continue;
      const relPath = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        out.push(`${relPath}/`);
        walk(path.join(dir, entry.name), relPath);
      } else out.push(relPath);
    }
  };
  walk(ROOT, '');
  return out;
}

/** The backticked names of the page that look like files or folders. */
function namedPaths(markdown: string): string[] {
  const names = new Set<string>();
  for (const [, raw] of markdown.matchAll(/`([^`\s]+)`/g)) {
    const name = raw!.replace(/\(.*$/, '');
    if (name.startsWith('/') || name.includes('://')) continue;
    if (!/\.(ts|mts|mjs|js|json|md|sh|txt|yml|yaml)$/.test(name) && !name.endsWith('/')) continue;
    names.add(name);
  }
  return [...names];
}

function matcher(name: string): RegExp {
  const pattern = name
    .split(/(<[^>]+>|\*)/)
    .map((part) => (part === '*' ? '[^/]*' : part.startsWith('<') ? '[^/]+' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`(^|/)${pattern}$`);
}

describe('docs/architecture.md', () => {
  const doc = readFileSync(path.join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const tree = treePaths();

  it('names at least the top folders of src/', () => {
    const named = namedPaths(doc);
    for (const dir of ['src/audio/', 'src/engines/', 'src/modules/<feature>/', 'src/wire/', 'src/lib/']) expect(named, `the map names ${dir}`).toContain(dir);
  });

  it('names only files and folders that exist', () => {
    const missing = namedPaths(doc).filter((name) => {
      if (!/[*<]/.test(name) && (existsSync(path.join(ROOT, name)) || existsSync(path.join(ROOT, 'src', name)))) return false;
      const re = matcher(name);
      return !tree.some((p) => re.test(p));
    });
    expect(missing).toEqual([]);
  });

  it('a name that is not in the tree is reported', () => {
    const re = matcher('modules/realtime/no-such-file.ts');
    expect(tree.some((p) => re.test(p))).toBe(false);
    expect(tree.some((p) => matcher('modules/<feature>/routes.ts').test(p))).toBe(true);
  });
});
