/** The one table of `mt` exit codes. */
export const ExitCode = {
  /** The command did what was asked. */
  Ok: 0,
  /** A user error: bad config, a refused call, an API error. */
  UserError: 1,
  /** Usage: unknown command or option, a missing argument. */
  Usage: 2,
  /** `mt import openapi`: a hand edit and a change of the document collide; nothing was written. */
  Conflict: 3,
} as const;

/** One of {@link ExitCode}. */
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];
