// Every relative link and `#anchor` of README.md, CONTRIBUTING.md and docs/**/*.md resolves: the file or folder it
// names exists, and the anchor is one GitHub gives a heading of the target page (lower case, punctuation dropped,
// spaces to hyphens, a repeated heading -1, -2, ...) or an explicit HTML id. Links with a scheme (https:, mailto:)
// are not followed. A link into a folder is checked against the folder; an anchor on it, against its README.md.
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchorsOf, githubSlug, linksOf, projectMarkdownFiles } from './markdown.js';

const ROOT = path.resolve(import.meta.dirname, '..');

/** The broken links of one page (`file:line target: why`), the pages read through `read` (relative to ROOT). */
function brokenLinks(file: string, read: (rel: string) => string | undefined, isDir: (rel: string) => boolean): string[] {
  const page = read(file)!;
  const problems: string[] = [];
  const anchorCache = new Map<string, Set<string>>();
  const anchors = (rel: string): Set<string> | undefined => {
    if (!anchorCache.has(rel)) {
      const text = read(rel);
      if (text === undefined) return undefined;
      anchorCache.set(rel, anchorsOf(text));
    }
    return anchorCache.get(rel);
  };
  for (const { line, target } of linksOf(page)) {
    if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const hash = target.indexOf('#');
    const pathPart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash)).replace(/\?.*$/, '');
    const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
    let rel = file;
    if (pathPart) {
      rel = path.posix.normalize(pathPart.startsWith('/') ? pathPart.slice(1) : path.posix.join(path.posix.dirname(file), pathPart)).replace(/\/$/, '');
      if (rel.startsWith('..')) {
        problems.push(`${file}:${line} ${target}: leaves the repository`);
        continue;
      }
      if (read(rel) === undefined && !isDir(rel)) {
        problems.push(`${file}:${line} ${target}: no such file or folder`);
        continue;
      }
    }
    if (anchor === undefined) continue;
    const page = isDir(rel) ? path.posix.join(rel, 'README.md') : rel;
    if (!page.endsWith('.md')) {
      problems.push(`${file}:${line} ${target}: an anchor into a file that is not Markdown`);
      continue;
    }
    const found = anchors(page);
    if (!found) problems.push(`${file}:${line} ${target}: ${page} does not exist`);
    else if (!found.has(anchor)) problems.push(`${file}:${line} ${target}: no heading or id "${anchor}" in ${page}`);
  }
  return problems;
}

const readProject = (rel: string): string | undefined => {
  const abs = path.join(ROOT, rel);
  return existsSync(abs) && statSync(abs).isFile() ? readFileSync(abs, 'utf8') : undefined;
};
const isProjectDir = (rel: string): boolean => existsSync(path.join(ROOT, rel)) && statSync(path.join(ROOT, rel)).isDirectory();

describe('links of the documentation', () => {
  const files = projectMarkdownFiles(ROOT);

  it('covers the README, the guide and docs/', () => {
    expect(files).toContain('README.md');
    expect(files).toContain('docs/architecture.md');
    expect(files).toContain('docs/guide/configuration.md');
  });

  it('every relative link and #anchor resolves', () => {
    expect(files.flatMap((f) => brokenLinks(f, readProject, isProjectDir))).toEqual([]);
  });
});

describe('the link checker', () => {
  const pages: Record<string, string> = {
    'a.md': [
      '# Real-time transcription (`/transcribe-websocket`)',
      '## Limits',
      '## Limits',
      '<a id="kept"></a>',
      '```md',
      '# Not a heading',
      '[not a link](missing.md)',
      '```',
      'See [b](sub/b.md#whats-new-in-v2), [c](#limits-1), [d](#kept), `[e](code.md)`, [f](https://example.com/x#y).',
      'And [g](sub/), ![h](sub/b.md).',
      'Broken: [x](sub/c.md), [y](#limits-2), [z](sub/b.md#not-there), [w](#not-a-heading), [v](sub/#top).',
    ].join('\n'),
    'sub/b.md': "## What's new in v2?",
  };
  const read = (rel: string): string | undefined => pages[rel];
  const isDir = (rel: string): boolean => rel === 'sub';

  it('gives headings the anchors GitHub gives them', () => {
    expect(githubSlug('Real-time transcription (`/transcribe-websocket`)')).toBe('real-time-transcription-transcribe-websocket');
    expect(githubSlug("What's new in **v2**?")).toBe('whats-new-in-v2');
    expect(githubSlug('Enrolled speakers (`/v1/speakers`)')).toBe('enrolled-speakers-v1speakers');
    expect(githubSlug('`PARLANCE_DATA_DIR` and [links](x.md)')).toBe('parlance_data_dir-and-links');
  });

  it('reports exactly the links that do not resolve', () => {
    expect(brokenLinks('a.md', read, isDir)).toEqual([
      'a.md:11 sub/c.md: no such file or folder',
      'a.md:11 #limits-2: no heading or id "limits-2" in a.md',
      'a.md:11 sub/b.md#not-there: no heading or id "not-there" in sub/b.md',
      'a.md:11 #not-a-heading: no heading or id "not-a-heading" in a.md',
      'a.md:11 sub/#top: sub/README.md does not exist',
    ]);
  });
});
