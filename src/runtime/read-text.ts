import { readFile } from 'node:fs';

/**
 * A whole small file as text, through the callback `readFile`: the FileHandle-based promise one
 * costs several times the CPU for the same calls, and owner records and retry states are read on
 * every push.
 */
export function readText(path: string, encoding: BufferEncoding): Promise<string> {
  return new Promise((resolve, reject) => readFile(path, encoding, (error, text) => (error ? reject(error) : resolve(text))));
}
