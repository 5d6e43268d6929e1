import { preferredNode } from '../../src/schedule/preferred-node.js';
import { uriKey } from '../../src/task/task.js';

/**
 * Project names `${prefix}0`, `${prefix}1`, … — at least `count` of them, and more until every
 * node id is the preferred node (schedule/preferred-node.ts) of one project's URI. A URI goes
 * first to its preferred node, so a test that expects every node to push must not depend on how
 * the hash fell for the names of its temp folder.
 */
export function projectsCoveringNodes(nodeIds: readonly string[], uriOf: (project: string) => string, count: number, prefix = 'p'): string[] {
  const projects: string[] = [];
  const uncovered = new Set(nodeIds);
  for (let i = 0; projects.length < count || uncovered.size > 0; i++) {
    if (i >= 1000) throw new Error(`no 1000 project names cover the nodes ${nodeIds.join(', ')}`);
    const project = `${prefix}${i}`;
    const preferred = preferredNode(uriKey(uriOf(project)), nodeIds)!;
    // Past `count`, a name is taken only for a node that still has no project.
    if (projects.length < count || uncovered.has(preferred)) projects.push(project);
    uncovered.delete(preferred);
  }
  return projects;
}
