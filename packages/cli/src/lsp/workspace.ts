import { readFile } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import type { EgressPolicy } from '@maitento/egress/static';
import {
  type CompiledRepo,
  classifyPath,
  type Diagnostic,
  filesUnder,
  parseMtr,
  RepoChecker,
  readConfigRepo,
  TOP_FOLDERS,
} from '@maitento/lang';

/** One config repo of the workspace: its files as on disk (`.mtr` and the `.json` files `@json` names). */
export interface Repo {
  /** Absolute path of the repo's root folder. */
  root: string;
  disk: Map<string, string>;
  /** The compiler, keeping each file's results between checks (a check redoes what the changes affect). */
  checker: RepoChecker;
  compiled?: CompiledRepo;
  /** `.json` files an `@json` named that were looked for on disk and not found (looked for again on a watcher event). */
  missing: Set<string>;
}

/** Where a `.mtr` file belongs: a config repo and its path in it, or no repo (then only its syntax is checked). */
export interface Place {
  repo?: Repo;
  /** Path relative to the repo root, with `/`; for a file of no repo, its absolute path. */
  rel: string;
}

const TOP = new Set<string>(TOP_FOLDERS);

/**
 * The `.mtr` files of the workspace folders, grouped by config repo, with the texts of open documents winning
 * over the disk. A file's config repo is the folder above the first resource folder (`connectors/`, `agents/`,
 * ...) on its path inside its workspace folder: what `mt check` would be pointed at.
 */
export class WorkspaceIndex {
  readonly repos = new Map<string, Repo>();
  /** `.mtr` files of no config repo, by absolute path: their disk text. */
  readonly loose = new Map<string, string>();
  /** Open documents by absolute path: their text in the editor. */
  readonly open = new Map<string, string>();
  /** The resources of each compile result, sorted (completion asks for them on every keystroke). */
  private readonly listed = new WeakMap<CompiledRepo, { kind: string; name: string; file: string }[]>();

  constructor(
    private readonly folders: string[],
    private readonly options: { egress?: EgressPolicy; platformOrigin?: string } = {},
  ) {}

  /**
   * The repo root of an absolute `.mtr` path, or undefined when it is in no resource folder. Inside a workspace
   * folder: the folder above the first resource folder under it. Outside any (a file opened on its own): the
   * nearest folder above a resource folder whose layout fits the path (`<root>/agents/x.mtr`).
   */
  rootOf(path: string): string | undefined {
    for (const folder of this.folders) {
      const rel = relative(folder, path);
      if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) continue;
      const parts = rel.split(sep);
      for (let i = 0; i < parts.length - 1; i++) {
        if (TOP.has(parts[i])) return join(folder, ...parts.slice(0, i));
      }
      return undefined;
    }
    const parts = path.split(sep);
    for (let i = parts.length - 2; i > 0; i--) {
      if (TOP.has(parts[i]) && classifyPath(parts.slice(i).join('/'))) return parts.slice(0, i).join(sep) || sep;
    }
    return undefined;
  }

  /** Reads every `.mtr` file of the workspace folders (and the `.json` files their repos name). */
  async index(): Promise<void> {
    for (const folder of this.folders) {
      const paths = await filesUnder(folder, ['.mtr']).catch(() => [] as string[]);
      for (const rel of paths) {
        const path = join(folder, ...rel.split('/'));
        const root = this.rootOf(path);
        if (root === undefined) {
          const text = await readFile(path, 'utf8').catch(() => undefined);
          if (text !== undefined) this.loose.set(path, text);
        } else await this.repoAt(root);
      }
    }
  }

  private async repoAt(root: string): Promise<Repo> {
    let repo = this.repos.get(root);
    if (repo) return repo;
    repo = { root, disk: new Map(), checker: new RepoChecker(this.options), missing: new Set() };
    this.repos.set(root, repo);
    for (const file of await readConfigRepo(root).catch(() => [])) repo.disk.set(file.path, file.content);
    return repo;
  }

  /** Where an absolute path belongs; reads its repo from disk the first time one of its files is seen. */
  async place(path: string): Promise<Place> {
    const root = this.rootOf(path);
    if (root === undefined) return { rel: path };
    const repo = await this.repoAt(root);
    return { repo, rel: relative(root, path).split(sep).join('/') };
  }

  /** The text of an absolute path: the open document's, else the disk's as last read. */
  text(path: string): string | undefined {
    const open = this.open.get(path);
    if (open !== undefined) return open;
    const root = this.rootOf(path);
    if (root === undefined) return this.loose.get(path);
    return this.repos.get(root)?.disk.get(relative(root, path).split(sep).join('/'));
  }

  /** Applies a watcher event: the file was created or changed (read it again) or deleted. */
  async fileChanged(path: string, deleted: boolean): Promise<Place> {
    const place = await this.place(path);
    const text = deleted ? undefined : await readFile(path, 'utf8').catch(() => undefined);
    const files = place.repo ? place.repo.disk : this.loose;
    if (text === undefined) files.delete(place.rel);
    else files.set(place.rel, text);
    return place;
  }

  /** The files of a repo as the compiler gets them: disk texts with open documents over them. */
  files(repo: Repo): { path: string; content: string }[] {
    const opened = new Map<string, string>();
    for (const [path, text] of this.open) {
      if (this.rootOf(path) === repo.root) opened.set(relative(repo.root, path).split(sep).join('/'), text);
    }
    const out: { path: string; content: string }[] = [];
    for (const [path, content] of repo.disk) {
      const text = opened.get(path);
      out.push({ path, content: text ?? content });
      if (text !== undefined) opened.delete(path);
    }
    for (const [path, content] of opened) out.push({ path, content });
    return out;
  }

  /**
   * Compiles a repo with the very compiler `mt check` and `mt deploy` use (its incremental form: what did not
   * change is not parsed or checked again); keeps the result for lookups.
   */
  compile(repo: Repo): CompiledRepo {
    repo.compiled = repo.checker.check(this.files(repo));
    return repo.compiled;
  }

  /**
   * The repos a `.json` file at an absolute path belongs to: those holding it under their root whose compile
   * read it or whose `@json`s name it. Their disk copy of it is read again (or dropped when it is gone).
   */
  async jsonChanged(path: string): Promise<Repo[]> {
    const out: Repo[] = [];
    for (const repo of this.repos.values()) {
      const rel = relative(repo.root, path);
      if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) continue;
      const key = rel.split(sep).join('/');
      if (!repo.disk.has(key) && !repo.checker.jsonPaths.has(key)) continue;
      const text = await readFile(path, 'utf8').catch(() => undefined);
      if (text === undefined) repo.disk.delete(key);
      else repo.disk.set(key, text);
      repo.missing.delete(key);
      out.push(repo);
    }
    return out;
  }

  /**
   * Reads from disk the `.json` files the last compile of a repo named but did not have (an `@json` typed in the
   * editor naming a file outside the resource folders); true when any was found, so the repo is checked again.
   */
  async readNamedJson(repo: Repo): Promise<boolean> {
    let found = false;
    for (const key of repo.checker.jsonPaths) {
      if (repo.disk.has(key) || repo.missing.has(key)) continue;
      const text = await readFile(join(repo.root, ...key.split('/')), 'utf8').catch(() => undefined);
      if (text === undefined) repo.missing.add(key);
      else {
        repo.disk.set(key, text);
        found = true;
      }
    }
    return found;
  }

  /** The syntax diagnostics of a file of no repo. */
  checkLoose(path: string): Diagnostic[] {
    return parseMtr(this.text(path) ?? '', path).diagnostics;
  }

  /**
   * Every resource of a repo (also never-opened files), by kind: its name and repo-relative path, sorted by name.
   * From the last compile (what `@ref` resolves against), else from the files.
   */
  resources(repo: Repo): { kind: string; name: string; file: string }[] {
    const compiled = repo.compiled;
    const known = compiled && this.listed.get(compiled);
    if (known) return known;
    const out: { kind: string; name: string; file: string }[] = [];
    const seen = new Set<string>();
    const sources = compiled
      ? compiled.sources
      : this.files(repo).flatMap(({ path }) => {
          const place = classifyPath(path);
          return place ? [{ ...place, file: path }] : [];
        });
    for (const { kind, name, file } of sources) {
      const key = `${kind}\u0000${name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ kind, name, file });
    }
    out.sort((a, b) => a.name.localeCompare(b.name));
    if (compiled) this.listed.set(compiled, out);
    return out;
  }
}
