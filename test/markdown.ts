// Reading the project's Markdown the way GitHub renders it, for the documentation tests (test/docs-links.test.ts,
// test/e2e/docs-blocks.test.ts): fenced code blocks, links, and the anchors GitHub gives headings.
import { readdirSync } from 'node:fs';
import path from 'node:path';

export interface FencedBlock {
  /** 1-based line of the opening fence. */
  line: number;
  /** 1-based line of the closing fence (the last line when the block is never closed). */
  end: number;
  /** The info string's first word (`sh`, `js`, `json`, ...), '' when the fence has none. */
  lang: string;
  /** The info string's other words (`no-test`). */
  flags: string[];
  /** The block's lines, the fence's indentation removed. */
  body: string;
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([^`]*)$/;

/** The fenced code blocks of a page, in order (an unclosed block runs to the end, as CommonMark has it). */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const lines = markdown.split('\n');
  const blocks: FencedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, info] = open;
    const [lang = '', ...flags] = info!.trim().split(/\s+/).filter(Boolean);
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const close = /^\s*(`{3,}|~{3,})\s*$/.exec(lines[j]!);
      if (close && close[1]![0] === fence![0] && close[1]!.length >= fence!.length) break;
      body.push(lines[j]!.startsWith(indent!) ? lines[j]!.slice(indent!.length) : lines[j]!.trimStart());
    }
    blocks.push({ line: i + 1, end: Math.min(j, lines.length - 1) + 1, lang, flags, body: body.join('\n') });
    i = j;
  }
  return blocks;
}

/** The page with its fenced blocks blanked out (line numbers kept) and its code spans removed. */
export function proseOf(markdown: string): string {
  const lines = markdown.split('\n');
  for (const b of fencedBlocks(markdown)) for (let i = b.line - 1; i < b.end; i++) lines[i] = '';
  return lines.join('\n').replace(/(`+)[\s\S]*?\1/g, (span) => span.replace(/[^\n]/g, ''));
}

/** GitHub's anchor for a heading's text: markup dropped, lower case, punctuation removed, each space a hyphen. */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]*>/g, '')
    .replace(/[`*~]/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a page offers: its headings' slugs (a repeated one gets -1, -2, ...) and explicit HTML ids. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const lines = markdown.split('\n');
  const blanked = new Set<number>();
  for (const b of fencedBlocks(markdown)) for (let i = b.line - 1; i < b.end; i++) blanked.add(i);
  lines.forEach((line, i) => {
    if (blanked.has(i)) return;
    const h = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
    if (h) {
      const base = githubSlug(h[1]!);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const [, id] of line.matchAll(/<a\s[^>]*?(?:id|name)="([^"]+)"/g)) anchors.add(id!);
  });
  return anchors;
}

export interface MarkdownLink {
  line: number;
  target: string;
}

/** The link and image targets of a page's prose (inline, reference definitions, HTML href/src), code left out. */
export function linksOf(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  proseOf(markdown)
    .split('\n')
    .forEach((line, i) => {
      for (const [, target] of line.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ line: i + 1, target: target! });
      const def = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(line);
      if (def) links.push({ line: i + 1, target: def[1]! });
      for (const [, target] of line.matchAll(/\s(?:href|src)="([^"]*)"/g)) links.push({ line: i + 1, target: target! });
    });
  return links;
}

/** README.md, CONTRIBUTING.md and every Markdown file under docs/, relative to `root`. */
export function projectMarkdownFiles(root: string): string[] {
  const files = ['README.md', 'CONTRIBUTING.md'];
  const walk = (rel: string): void => {
    for (const entry of readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const relPath = `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(relPath);
      else if (entry.name.endsWith('.md')) files.push(relPath);
    }
  };
  walk('docs');
  return files.sort();
}
