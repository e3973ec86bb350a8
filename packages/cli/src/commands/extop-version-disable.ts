import type { RegisterCommand } from './index.js';
import { registerVersionToggle } from '../internal/version-toggle.js';

/** `mt extop-version-disable NAME VERSION`. */
export const register: RegisterCommand = (program, io) =>
  registerVersionToggle(program, io, { kind: 'extop', action: 'disable' });
