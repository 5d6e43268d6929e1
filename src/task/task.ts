/** The task model, its canonical form, keys and file codec: import them from here. */
export { FULL_SYNC_REF, canonicalTask, laneOfTask, tasksWithinSize, type Lane, type Task } from './task-model.js';
export { TASK_FORMAT_VERSION, encodeTask, decodeTask } from './task-codec.js';
export { taskKey, uriKey } from './task-key.js';
