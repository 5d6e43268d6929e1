import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { projectNameProblem } from '../task/names.js';

/**
 * Every repository under `basePath`, as project names: folders named `<project>.git` that hold a
 * `HEAD` file. Repositories are not descended into; hidden folders are skipped.
 */
export async function discoverProjects(basePath: string): Promise<string[]> {
  const found: string[] = [];
  async function walk(dir: string, prefix: string): Promise<void> {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      let isDir = entry.isDirectory();
      if (!isDir && (entry.isSymbolicLink() || !entry.isFile()))
        isDir = await stat(path).then(
          (s) => s.isDirectory(),
          () => false,
        );
      if (!isDir) continue;
      if (entry.name.endsWith('.git')) {
        const isRepo = await stat(join(path, 'HEAD')).then(
          (s) => s.isFile(),
          () => false,
        );
        const project = `${prefix}${entry.name.slice(0, -'.git'.length)}`;
        if (isRepo && projectNameProblem(project) === undefined) found.push(project);
        if (isRepo) continue;
      }
      await walk(path, `${prefix}${entry.name}/`);
    }
  }
  await walk(basePath, '');
  return found.sort();
}
