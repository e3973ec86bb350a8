import type { RegisterCommand } from './index.js';
import { registerVersionToggle } from '../internal/version-toggle.js';

/** `mt connector-version-enable NAME VERSION`. */
export const register: RegisterCommand = (program, io) =>
  registerVersionToggle(program, io, { kind: 'connector', action: 'enable' });
