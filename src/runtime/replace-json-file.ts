import { rename, unlink, writeFile } from 'node:fs/promises';

/**
 * Replaces `path` with `value` as one line of JSON through `temp` and a rename, so readers on any
 * machine see the old file or the new one. A failed write (ENOSPC) leaves an empty temp: it is
 * removed, else one would pile up per attempt.
 */
export async function replaceJsonFile(temp: string, path: string, value: unknown): Promise<void> {
  try {
    await writeFile(temp, `${JSON.stringify(value)}\n`);
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}
