import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The layers of `src/`, lowest first, as docs/DESIGN.md ("Dependency direction") lists them.
 * A module may import its own folder and any folder of a lower layer; folders of one layer are
 * siblings and do not import each other.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['runtime', 'errors.ts'],
  ['task'],
  ['config'],
  ['store', 'lock', 'cluster'],
  ['push'],
  ['intake', 'schedule'],
  ['observe'],
  ['daemon'],
  ['cli'],
];

const SRC = resolve(import.meta.dirname, '../src');

function layerOf(unit: string): number {
  const index = LAYERS.findIndex((layer) => layer.includes(unit));
  if (index < 0) throw new Error(`src/${unit} is in no layer: add it to LAYERS and to DESIGN.md`);
  return index;
}

/** `cli`, `store`, … or `errors.ts`: the folder (or top-level file) a path of src/ belongs to. */
function unitOf(file: string): string {
  return relative(SRC, file).split('/')[0]!;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Relative specifiers of static imports, re-exports and dynamic imports. */
function relativeImports(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.[^'"]+)['"]/gm)) found.push(match[1]!);
  return found;
}

function violations(): string[] {
  const bad: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const from = unitOf(file);
    for (const specifier of relativeImports(readFileSync(file, 'utf8'))) {
      const target = resolve(dirname(file), specifier.replace(/\.js$/, '.ts'));
      const to = unitOf(target);
      if (to === from) continue;
      if (layerOf(to) >= layerOf(from)) bad.push(`${relative(SRC, file)} imports ${relative(SRC, target)} (${from} → ${to})`);
    }
  }
  return bad;
}

describe('src/ layers', () => {
  it('every import points to a lower layer', () => {
    expect(violations()).toEqual([]);
  });

  it('finds an upward import (the check itself works)', () => {
    expect(relativeImports(`import type { A } from '../daemon/x.js';\nexport { b } from './b.js';\nawait import('../cli/c.js');`)).toEqual([
      '../daemon/x.js',
      './b.js',
      '../cli/c.js',
    ]);
    expect(layerOf('daemon')).toBeGreaterThan(layerOf('store'));
    expect(layerOf('store')).toBe(layerOf('lock'));
  });
});
