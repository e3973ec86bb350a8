import {
  createTokenInstance,
  EmbeddedActionsParser,
  EOF,
  type IOrAlt,
  type IToken,
  type ParserMethod,
  type TokenType,
  tokenMatcher,
} from 'chevrotain';
import type { ArrayValue, Assignment, DirectiveValue, KeyPath, KeySegment, ObjectValue, ValueNode } from './ast.js';
import { messages } from './messages.js';
import { hasPosition } from './positions.js';
import { AstBuilder } from './to-ast.js';
import {
  AnyToken,
  allTokens,
  Colon,
  Comma,
  DirectiveName,
  Dot,
  Equals,
  False,
  Identifier,
  Keyword,
  LBracket,
  LCurly,
  LParen,
  Null,
  NumberLiteral,
  RBracket,
  RCurly,
  RParen,
  StrayStart,
  StringLike,
  True,
} from './tokens.js';

// What a rule returns when chevrotain's recovery re-synced out of it: the parent drops it, with the
// diagnostics found inside it, as the rule did not parse.
const RECOVERED: unique symbol = Symbol('recovered');
const recovered = (): typeof RECOVERED => RECOVERED;
// A token with no position: what `last` is before any token is consumed.
const NO_TOKEN = createTokenInstance(EOF, '', Number.NaN, Number.NaN, Number.NaN, Number.NaN, Number.NaN, Number.NaN);
type Built<T> = T | undefined | typeof RECOVERED;

/**
 * The `.mtr` grammar:
 *
 * ```
 * file       := (assignment | stray)*
 * assignment := keyPath "=" value
 * keyPath    := keySegment ("." keySegment)*
 * keySegment := name (":" name)?          name := Identifier | String | true | false | null
 * value      := String | Number | true | false | null | array | object | directive
 * array      := "[" (value ("," value)* ","?)? "]"
 * object     := "{" assignment* "}"
 * directive  := "@name" "(" (String ("," String)* ","?)? ")"
 * stray      := a token that cannot begin a key, and the rest of its line
 * ```
 *
 * `stray` keeps one broken top-level line from swallowing the lines after it: the parser skips the
 * line and carries on with the next assignment, so one pass reports every broken line.
 *
 * The rules build the AST as they go (no concrete syntax tree in between, which cost half the parse
 * time); a rule that recovery re-synced out of gives nothing, and its diagnostics are taken back.
 */
class MtrParser extends EmbeddedActionsParser {
  /** Builds the AST nodes; `parseMtr` resets it for each file. */
  readonly ast = new AstBuilder();
  /** The top-level assignments of the file being parsed. */
  assignments: Assignment[] = [];
  /** The keys of top-level assignments whose value did not parse. */
  unparsed: KeyPath[] = [];
  /** The diagnostics mark of the top-level assignment being parsed, -1 between assignments. */
  pending = -1;
  /** Where the key of the top-level assignment being parsed goes in {@link keys}, -1 between assignments. */
  pendingKey = -1;
  // The key of each assignment being parsed, outermost first: an assignment pushes its key before its value,
  // so the caller finds it even when the value, or recovery, left no assignment.
  private readonly keys: (KeyPath | undefined)[] = [];
  // The last token consumed that has a position, for the spans of nodes whose closer recovery inserted.
  private last: IToken = NO_TOKEN;

  constructor() {
    super(allTokens, { recoveryEnabled: true, maxLookahead: 2, errorMessageProvider: messages });
    this.performSelfAnalysis();
  }

  /** Starts a new file. */
  start(file: string, tokens: IToken[]): void {
    this.ast.reset(file);
    this.assignments = [];
    this.unparsed = [];
    this.pending = -1;
    this.pendingKey = -1;
    this.keys.length = 0;
    this.last = NO_TOKEN;
    this.input = tokens;
  }

  private take(token: IToken): IToken {
    if (hasPosition(token)) this.last = token;
    return token;
  }

  // Calls a rule; when recovery re-synced out of it, takes back its diagnostics and gives undefined.
  private child<T>(idx: number, rule: ParserMethod<[], Built<T>>): T | undefined {
    if (this.RECORDING_PHASE) {
      this.subrule(idx, rule);
      return undefined;
    }
    const mark = this.ast.mark();
    const result = this.subrule(idx, rule);
    if (result !== RECOVERED) return result;
    this.ast.truncate(mark);
    return undefined;
  }

  // Calls the assignment rule; a key whose value did not parse goes to `unparsed`, so that no later check
  // reports the key as missing on top of the syntax error (`method = GET` is not also "needs method").
  private entry(idx: number, unparsed: KeyPath[]): Assignment | undefined {
    if (this.RECORDING_PHASE) return this.child(idx, this.assignment);
    const depth = this.keys.length;
    const assignment = this.child(idx, this.assignment);
    const key = this.keys[depth];
    this.keys.length = depth;
    if (assignment === undefined && key !== undefined) unparsed.push(key);
    return assignment;
  }

  /** The key of the top-level assignment that recovery re-synced out of, up at the file, if it was read. */
  pendingKeyPath(): KeyPath | undefined {
    return this.pendingKey >= 0 ? this.keys[this.pendingKey] : undefined;
  }

  // The alternatives of each OR are built once, not on every call: allocating them per call was a large
  // source of garbage in parsing (chevrotain's own advice for fast parsers).
  private readonly headAlternatives: IOrAlt<IToken>[] = [
    { ALT: () => this.take(this.CONSUME(Identifier)) },
    { ALT: () => this.take(this.CONSUME(StringLike)) },
    { ALT: () => this.take(this.CONSUME(Keyword)) },
  ];

  private readonly tailAlternatives: IOrAlt<IToken>[] = [
    { ALT: () => this.take(this.CONSUME2(Identifier)) },
    { ALT: () => this.take(this.CONSUME2(StringLike)) },
    { ALT: () => this.take(this.CONSUME2(Keyword)) },
  ];

  private readonly valueAlternatives: IOrAlt<ValueNode | undefined>[] = [
    { ALT: () => this.build(this.take(this.CONSUME(StringLike)), (t) => this.ast.string(t)) },
    { ALT: () => this.build(this.take(this.CONSUME(NumberLiteral)), (t) => this.ast.number(t)) },
    { ALT: () => this.build(this.take(this.CONSUME(True)), (t) => this.ast.boolean(t, true)) },
    { ALT: () => this.build(this.take(this.CONSUME(False)), (t) => this.ast.boolean(t, false)) },
    { ALT: () => this.build(this.take(this.CONSUME(Null)), (t) => this.ast.null(t)) },
    { ALT: () => this.child(1, this.array) },
    { ALT: () => this.child(2, this.object) },
    { ALT: () => this.child(3, this.directive) },
    // A bare word on the line of its `=` (`method = GET`) is a value missing its quotes: taking it
    // here gives one clear diagnostic instead of reading it as the key of a next assignment.
    {
      GATE: () => this.bareWordAhead(),
      ALT: () => this.build(this.take(this.CONSUME2(Identifier)), (t) => this.ast.bareWord(t)),
    },
  ];

  private readonly fileAlternatives: IOrAlt<void>[] = [
    {
      ALT: () => {
        if (!this.RECORDING_PHASE) {
          // A previous assignment that recovery unwound past, up at the file, left its key behind.
          const left = this.pendingKeyPath();
          if (left !== undefined) this.unparsed.push(left);
          this.keys.length = 0;
          this.pending = this.ast.mark();
          this.pendingKey = 0;
        }
        const assignment = this.entry(1, this.unparsed);
        this.pending = -1;
        this.pendingKey = -1;
        if (assignment !== undefined) this.assignments.push(assignment);
      },
    },
    { ALT: () => void this.subrule(2, this.stray) },
  ];

  // Runs a node builder on a token outside the recording phase (when tokens are placeholders).
  private build<T>(token: IToken, build: (token: IToken) => T): T | undefined {
    return this.RECORDING_PHASE ? undefined : build(token);
  }

  file = this.RULE('file', () => {
    this.MANY(() => {
      this.OR(this.fileAlternatives);
    });
  });

  assignment = this.RULE(
    'assignment',
    (): Built<Assignment> => {
      const key = this.child(1, this.keyPath);
      if (!this.RECORDING_PHASE) this.keys.push(key);
      this.take(this.CONSUME(Equals));
      const value = this.child(2, this.value);
      return this.RECORDING_PHASE ? undefined : this.ast.assignment(key, value);
    },
    { recoveryValueFunc: recovered },
  );

  // The key being read. A key holds no values, so no key is read while another is: one set of fields is
  // enough, and it spares two closures for every key.
  private segments: KeySegment[] = [];
  private brokenKey = false;

  // As in a key read left to right: after a segment that could not be built, later ones are not looked at.
  private addSegment(segment: KeySegment | undefined, mark: number): void {
    if (this.brokenKey) this.ast.truncate(mark);
    else if (segment === undefined) this.brokenKey = true;
    else this.segments.push(segment);
  }

  private readonly nextSegment = () => {
    this.take(this.CONSUME(Dot));
    const mark = this.RECORDING_PHASE ? 0 : this.ast.mark();
    this.addSegment(this.child(2, this.keySegment), mark);
  };

  keyPath = this.RULE(
    'keyPath',
    (): Built<KeyPath> => {
      this.segments = [];
      this.brokenKey = false;
      this.addSegment(this.child(1, this.keySegment), 0);
      this.MANY(this.nextSegment);
      return this.brokenKey || this.RECORDING_PHASE ? undefined : this.ast.keyPath(this.segments);
    },
    { recoveryValueFunc: recovered },
  );

  keySegment = this.RULE(
    'keySegment',
    (): Built<KeySegment> => {
      const head = this.OR(this.headAlternatives);
      let tail: IToken | undefined;
      this.OPTION(() => {
        this.take(this.CONSUME(Colon));
        tail = this.OR2(this.tailAlternatives);
      });
      return this.RECORDING_PHASE ? undefined : this.ast.keySegment(head, tail);
    },
    { recoveryValueFunc: recovered },
  );

  value = this.RULE('value', (): Built<ValueNode> => this.OR(this.valueAlternatives), {
    recoveryValueFunc: recovered,
  });

  array = this.RULE(
    'array',
    (): Built<ArrayValue> => {
      const open = this.take(this.CONSUME(LBracket));
      const elements: ValueNode[] = [];
      this.OPTION(() => {
        const first = this.child(1, this.value);
        if (first !== undefined) elements.push(first);
        this.MANY(() => {
          this.take(this.CONSUME(Comma));
          const next = this.child(2, this.value);
          if (next !== undefined) elements.push(next);
        });
        this.OPTION2(() => this.take(this.CONSUME2(Comma)));
      });
      const close = this.take(this.CONSUME(RBracket));
      return this.RECORDING_PHASE ? undefined : this.ast.array(open, close, this.last, elements);
    },
    { recoveryValueFunc: recovered },
  );

  object = this.RULE(
    'object',
    (): Built<ObjectValue> => {
      const open = this.take(this.CONSUME(LCurly));
      const entries: Assignment[] = [];
      const unparsed: KeyPath[] = [];
      this.MANY(() => {
        const entry = this.entry(1, unparsed);
        if (entry !== undefined) entries.push(entry);
      });
      const close = this.take(this.CONSUME(RCurly));
      return this.RECORDING_PHASE ? undefined : this.ast.object(open, close, this.last, entries, unparsed);
    },
    { recoveryValueFunc: recovered },
  );

  directive = this.RULE(
    'directive',
    (): Built<DirectiveValue> => {
      const errors = this.RECORDING_PHASE ? 0 : this.errors.length;
      const name = this.take(this.CONSUME(DirectiveName));
      this.take(this.CONSUME(LParen));
      const args: IToken[] = [];
      this.OPTION(() => {
        args.push(this.take(this.CONSUME(StringLike)));
        this.MANY(() => {
          this.take(this.CONSUME(Comma));
          args.push(this.take(this.CONSUME2(StringLike)));
        });
        this.OPTION2(() => this.take(this.CONSUME2(Comma)));
      });
      const close = this.take(this.CONSUME(RParen));
      if (this.RECORDING_PHASE) return undefined;
      // Arguments that did not parse (`@ref(c)`: recovery puts in the `)` and leaves `c` out) make no directive,
      // so its key counts as unparsed: the syntax error alone, not also "takes exactly one string argument".
      if (this.errors.length !== errors) return RECOVERED;
      return this.ast.directive(name, close, this.last, args);
    },
    { recoveryValueFunc: recovered },
  );

  stray = this.RULE('stray', () => {
    const first = this.take(this.CONSUME(StrayStart));
    let last = first;
    this.MANY({
      GATE: () => this.LA(1).startLine === first.startLine,
      DEF: () => {
        const token = this.take(this.CONSUME(AnyToken));
        if (hasPosition(token)) last = token;
      },
    });
    if (!this.RECORDING_PHASE) this.ast.stray(first, last);
  });

  private bareWordAhead(): boolean {
    const previous = this.LA(0);
    const next = this.LA(2).tokenType;
    return (
      this.LA(1).startLine === previous.startLine &&
      next !== Equals &&
      next !== Dot &&
      next !== Colon &&
      next !== LParen
    );
  }

  /**
   * Chevrotain's re-sync after an error takes the first follow set, outermost rule first, that has a
   * token ahead; our top-level `stray` rule accepts nearly any token, so that would always unwind to the
   * top. Looking innermost first recovers where the error is: a broken entry of an object resumes
   * inside the object.
   */
  findReSyncTokenType(): TokenType {
    const self = this as unknown as RecoveryInternals;
    const sets = self
      .buildFullFollowKeyStack()
      .map((key) => self.getFollowSetFromFollowKey(key) ?? [])
      .reverse();
    for (let k = 1; ; k++) {
      const token = this.LA(k);
      for (const set of sets) {
        for (const type of set) if (tokenMatcher(token, type)) return type;
      }
    }
  }

  /** The tokens being parsed, for the error messages that name the key before a missing `=`. */
  get tokens(): IToken[] {
    return this.input;
  }
}

// The parts of chevrotain's recovery trait that findReSyncTokenType uses; they are not in its typings.
interface RecoveryInternals {
  buildFullFollowKeyStack(): unknown[];
  getFollowSetFromFollowKey(key: unknown): TokenType[] | undefined;
}

/** The one parser instance of the process; `parseMtr` resets it for each file. */
export const parser = new MtrParser();
