// The dependency rules of docs/architecture.md, "Layers": no import circles among the files of src/ (type-only
// imports included, so a shared type lives in an interface file both sides import), and engines never import
// config/ (they take resolved options from whoever builds them).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const srcDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const compilerOptions: ts.CompilerOptions = {
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
};

/** Every non-test TypeScript file under `dir`, as absolute paths. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

/** The files of src/ each file imports: static, type-only, re-exports and `import()`, resolved as tsc does. */
function importGraph(files: string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = new Set<string>();
    for (const { fileName } of importedFiles) {
      const resolved = ts.resolveModuleName(fileName, file, compilerOptions, ts.sys).resolvedModule;
      if (resolved && !resolved.isExternalLibraryImport && known.has(resolved.resolvedFileName)) {
        targets.add(resolved.resolvedFileName);
      }
    }
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/** Strongly connected components of more than one file, or of one file that imports itself (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)?.includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** One shortest way round a component, starting and ending at its first file: `a -> b -> a`. */
function oneLoop(graph: Map<string, string[]>, component: string[]): string[] {
  const members = new Set(component);
  const start = component[0]!;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of graph.get(v) ?? []) {
      if (!members.has(w)) continue;
      if (w === start) {
        const loop = [start];
        for (let u = v; u !== start; u = cameFrom.get(u)!) loop.unshift(u);
        return [start, ...loop];
      }
      if (!cameFrom.has(w)) {
        cameFrom.set(w, v);
        queue.push(w);
      }
    }
  }
  return component;
}

const rel = (file: string): string => path.relative(srcDir, file).split(path.sep).join('/');
const graph = importGraph(sourceFiles(srcDir));

describe('the import graph of src/', () => {
  it('sees the source tree', () => {
    // Guards the two checks below against passing on an empty or unresolved graph.
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get(path.join(srcDir, 'server.ts'))?.map(rel)).toContain('create-context.ts');
  });

  it('has no circles', () => {
    const found = circles(graph).map((c) => `${c.map(rel).join(', ')}\n    e.g. ${oneLoop(graph, c).map(rel).join(' -> ')}`);
    expect(found).toEqual([]);
  });

  it('has no engine that imports config/', () => {
    const found: string[] = [];
    for (const [file, targets] of graph) {
      if (!rel(file).startsWith('engines/')) continue;
      for (const target of targets) if (rel(target).startsWith('config/')) found.push(`${rel(file)} -> ${rel(target)}`);
    }
    expect(found).toEqual([]);
  });
});
