import { hostname, userInfo } from 'node:os';

/** `user@host` for the record of a drop: who ran the command, where. */
export function operatorName(): string {
  let user: string | undefined;
  try {
    user = userInfo().username;
  } catch {
    // A uid without a passwd entry (containers): the environment may still know a name.
    user = process.env.USER ?? process.env.LOGNAME;
  }
  return `${user ?? `uid-${process.getuid?.() ?? '?'}`}@${hostname()}`;
}
