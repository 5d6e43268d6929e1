import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TaskFormatError } from '../../src/errors.js';
import { FULL_SYNC_REF, canonicalTask, decodeTask, encodeTask, taskKey, type Task } from '../../src/task/task.js';

/** Decodes, or returns the TaskFormatError; any other exception fails the property. */
function decodeOrError(text: string): Task | TaskFormatError {
  try {
    return decodeTask(text);
  } catch (error) {
    if (error instanceof TaskFormatError) return error;
    throw error;
  }
}

function expectValidTask(task: Task): void {
  expect(Object.isFrozen(task)).toBe(true);
  expect(Object.isFrozen(task.refs)).toBe(true);
  for (const field of [task.project, task.uri, task.remote]) expect(typeof field === 'string' && field !== '').toBe(true);
  expect(task.refs.length).toBeGreaterThan(0);
  for (const ref of task.refs) expect(typeof ref === 'string' && ref !== '').toBe(true);
  expect(canonicalTask(task)).toEqual(task);
}

const text = fc.string({ unit: 'binary', minLength: 1, maxLength: 30 });
const ref = fc.oneof(fc.constantFrom('refs/heads/main', 'refs/tags/v1', 'refs/heads/ä', 'refs/heads/B', FULL_SYNC_REF, 'refs/changes/01/1/1'), text);

const task: fc.Arbitrary<Task> = fc.record({ project: text, refs: fc.array(ref, { minLength: 1, maxLength: 6 }), uri: text, remote: text });

const fieldNames = ['version', 'project', 'refs', 'ref', 'uri', 'remote', 'extra', '__proto__'] as const;

/** One change to a task file: a field removed, or set to some other JSON value. */
const mutation = fc.record({
  field: fc.constantFrom(...fieldNames),
  value: fc.oneof(
    fc.constant(undefined),
    fc.constantFrom('', null, [], {}, 0, 1, 2, -1, 1.5, Infinity, '1', [''], [1], FULL_SYNC_REF),
    ref,
    fc.array(ref, { maxLength: 3 }),
    fc.jsonValue({ maxDepth: 2 }),
  ),
});

/**
 * Task files as refrelay and Gerrit write them (versioned, unversioned, legacy
 * single `ref`), with up to three fields removed or changed, and any JSON value.
 */
const taskLikeJson: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.tuple(task, fc.constantFrom('v1', 'unversioned', 'legacy-ref'), fc.array(mutation, { maxLength: 3 })).map(([t, form, changes]) => {
      const file: Record<string, unknown> =
        form === 'v1'
          ? { version: 1, ...t, refs: [...t.refs] }
          : form === 'unversioned'
            ? { ...t, refs: [...t.refs] }
            : { project: t.project, ref: t.refs[0], uri: t.uri, remote: t.remote };
      for (const { field, value } of changes) {
        if (value === undefined) delete file[field];
        else Object.defineProperty(file, field, { value, enumerable: true, configurable: true, writable: true });
      }
      return file;
    }),
  },
  { weight: 1, arbitrary: fc.jsonValue() },
);

describe('decodeTask', () => {
  it('turns any string into a valid, frozen, canonical Task or a TaskFormatError', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary' }),
          fc.json(),
          taskLikeJson.map((v) => JSON.stringify(v) ?? ''),
        ),
        (input) => {
          const result = decodeOrError(input);
          if (result instanceof TaskFormatError) expect(result.code).toBe('TASK_FORMAT');
          else expectValidTask(result);
        },
      ),
      { seed: 2001, numRuns: 3000 },
    );
  });

  it('decodes task-shaped JSON, damaged or truncated or with extra whitespace, to a Task or a TaskFormatError', () => {
    fc.assert(
      fc.property(taskLikeJson, fc.nat(), fc.constantFrom('', ' ', '\n', '\r\n', '\ufeff', '\u00a0'), (value, cut, padding) => {
        const full = JSON.stringify(value) ?? 'undefined';
        for (const input of [full, `${padding}${full}${padding}`, full.slice(0, cut % (full.length + 1))]) {
          const result = decodeOrError(input);
          if (result instanceof TaskFormatError) expect(result.message).not.toBe('');
          else expectValidTask(result);
        }
      }),
      { seed: 2002, numRuns: 2000 },
    );
  });

  it('decodes every accepted file to a task whose encoding decodes to the same task', () => {
    let accepted = 0;
    fc.assert(
      fc.property(taskLikeJson, (value) => {
        const decoded = decodeOrError(JSON.stringify(value) ?? '');
        if (decoded instanceof TaskFormatError) return;
        accepted += 1;
        expect(decodeTask(encodeTask(decoded))).toEqual(decoded);
      }),
      { seed: 2003, numRuns: 2000 },
    );
    // Task-shaped input must reach the accepting side often enough to mean something.
    expect(accepted).toBeGreaterThan(100);
  });
});

describe('encodeTask', () => {
  it('round-trips every valid Task through decodeTask to its canonical form', () => {
    fc.assert(
      fc.property(task, (t) => {
        const encoded = encodeTask(t);
        expect(encoded.endsWith('\n')).toBe(true);
        expect(encoded.slice(0, -1)).not.toContain('\n');
        expect(decodeTask(encoded)).toEqual(canonicalTask(t));
      }),
      { seed: 2004, numRuns: 2000 },
    );
  });

  it('writes bytes that survive a UTF-8 file round trip, even for lone surrogates', () => {
    fc.assert(
      fc.property(task, (t) => {
        const encoded = encodeTask(t);
        expect(Buffer.from(encoded, 'utf8').toString('utf8')).toBe(encoded);
      }),
      { seed: 2005, numRuns: 1000 },
    );
  });

  it('refuses to write a task no reader would accept (an empty field or ref), with a TaskFormatError', () => {
    fc.assert(
      fc.property(task, fc.constantFrom('project', 'uri', 'remote', 'refs', 'ref-item'), (t, broken) => {
        const bad = broken === 'refs' ? { ...t, refs: [] } : broken === 'ref-item' ? { ...t, refs: [...t.refs, ''] } : { ...t, [broken]: '' };
        if (broken === 'ref-item' && t.refs.includes(FULL_SYNC_REF)) {
          // A full sync absorbs every other ref, the empty one too: what is written is readable.
          expect(decodeTask(encodeTask(bad)).refs).toEqual([FULL_SYNC_REF]);
          return;
        }
        expect(() => encodeTask(bad)).toThrow(TaskFormatError);
      }),
      { seed: 2006, numRuns: 300 },
    );
  });
});

describe('taskKey', () => {
  it('is the same whatever the ref order and duplicates, and a full sync absorbs every other ref', () => {
    fc.assert(
      fc.property(task, fc.array(fc.nat(), { maxLength: 10 }), fc.boolean(), (t, picks, reverse) => {
        const shuffled = [...t.refs, ...picks.map((i) => t.refs[i % t.refs.length] ?? 'x')];
        if (reverse) shuffled.reverse();
        else shuffled.sort();
        expect(taskKey({ ...t, refs: shuffled })).toBe(taskKey(t));
        expect(taskKey({ ...t, refs: [...shuffled, FULL_SYNC_REF] })).toBe(taskKey({ ...t, refs: [FULL_SYNC_REF] }));
        expect(taskKey(t)).toMatch(/^[0-9a-f]{40}$/);
      }),
      { seed: 2007, numRuns: 1000 },
    );
  });

  it('differs when the set of refs differs', () => {
    fc.assert(
      fc.property(task, ref, (t, extra) => {
        fc.pre(!t.refs.includes(extra) && !t.refs.includes(FULL_SYNC_REF) && extra !== FULL_SYNC_REF);
        expect(taskKey({ ...t, refs: [...t.refs, extra] })).not.toBe(taskKey(t));
      }),
      { seed: 2008, numRuns: 500 },
    );
  });

  it('is the key of the decoded task for every file that decodes', () => {
    fc.assert(
      fc.property(task, (t) => {
        expect(taskKey(decodeTask(encodeTask(t)))).toBe(taskKey(t));
      }),
      { seed: 2009, numRuns: 500 },
    );
  });
});
