import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A folder of scripted models' scripts (`MT_SCRIPTED_MODELS`, or `scriptsDir` of the engine's model resolver). */
export interface ScriptedModels {
  dir: string;
  /** Writes the script of `scripted:NAME`: the turns it answers, in order. */
  script(name: string, turns: unknown[]): void;
}

/** A fresh temporary folder for scripted models' scripts. */
export function scriptedModels(prefix = 'mt-scripts-'): ScriptedModels {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return {
    dir,
    script(name, turns) {
      writeFileSync(join(dir, `${name}.json`), JSON.stringify(turns));
    },
  };
}
