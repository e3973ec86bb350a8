import { CstParser, type IOrAlt, type IToken, type TokenType, tokenMatcher } from 'chevrotain';
import { messages } from './messages.js';
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
 */
class MtrParser extends CstParser {
  constructor() {
    super(allTokens, { recoveryEnabled: true, maxLookahead: 2, errorMessageProvider: messages });
    this.performSelfAnalysis();
  }

  file = this.RULE('file', () => {
    this.MANY(() => {
      this.OR(this.fileAlternatives);
    });
  });

  assignment = this.RULE('assignment', () => {
    this.SUBRULE(this.keyPath);
    this.CONSUME(Equals);
    this.SUBRULE(this.value);
  });

  keyPath = this.RULE('keyPath', () => {
    this.SUBRULE(this.keySegment);
    this.MANY(() => {
      this.CONSUME(Dot);
      this.SUBRULE2(this.keySegment);
    });
  });

  // The alternatives of each OR are built once, not on every call: allocating them per call was the
  // largest source of garbage in parsing (chevrotain's own advice for fast parsers).
  private readonly headAlternatives: IOrAlt<unknown>[] = [
    { ALT: () => this.CONSUME(Identifier, { LABEL: 'head' }) },
    { ALT: () => this.CONSUME(StringLike, { LABEL: 'head' }) },
    { ALT: () => this.CONSUME(Keyword, { LABEL: 'head' }) },
  ];

  private readonly tailAlternatives: IOrAlt<unknown>[] = [
    { ALT: () => this.CONSUME2(Identifier, { LABEL: 'tail' }) },
    { ALT: () => this.CONSUME2(StringLike, { LABEL: 'tail' }) },
    { ALT: () => this.CONSUME2(Keyword, { LABEL: 'tail' }) },
  ];

  private readonly valueAlternatives: IOrAlt<unknown>[] = [
    { ALT: () => this.CONSUME(StringLike) },
    { ALT: () => this.CONSUME(NumberLiteral) },
    { ALT: () => this.CONSUME(True) },
    { ALT: () => this.CONSUME(False) },
    { ALT: () => this.CONSUME(Null) },
    { ALT: () => this.SUBRULE(this.array) },
    { ALT: () => this.SUBRULE(this.object) },
    { ALT: () => this.SUBRULE(this.directive) },
    // A bare word on the line of its `=` (`method = GET`) is a value missing its quotes: taking it
    // here gives one clear diagnostic instead of reading it as the key of a next assignment.
    { GATE: () => this.bareWordAhead(), ALT: () => this.CONSUME(Identifier, { LABEL: 'bareWord' }) },
  ];

  private readonly fileAlternatives: IOrAlt<unknown>[] = [
    { ALT: () => this.SUBRULE(this.assignment) },
    { ALT: () => this.SUBRULE(this.stray) },
  ];

  keySegment = this.RULE('keySegment', () => {
    this.OR(this.headAlternatives);
    this.OPTION(() => {
      this.CONSUME(Colon);
      this.OR2(this.tailAlternatives);
    });
  });

  value = this.RULE('value', () => {
    this.OR(this.valueAlternatives);
  });

  array = this.RULE('array', () => {
    this.CONSUME(LBracket);
    this.OPTION(() => {
      this.SUBRULE(this.value);
      this.MANY(() => {
        this.CONSUME(Comma);
        this.SUBRULE2(this.value);
      });
      this.OPTION2(() => this.CONSUME2(Comma));
    });
    this.CONSUME(RBracket);
  });

  object = this.RULE('object', () => {
    this.CONSUME(LCurly);
    this.MANY(() => this.SUBRULE(this.assignment));
    this.CONSUME(RCurly);
  });

  directive = this.RULE('directive', () => {
    this.CONSUME(DirectiveName);
    this.CONSUME(LParen);
    this.OPTION(() => {
      this.CONSUME(StringLike, { LABEL: 'args' });
      this.MANY(() => {
        this.CONSUME(Comma);
        this.CONSUME2(StringLike, { LABEL: 'args' });
      });
      this.OPTION2(() => this.CONSUME2(Comma));
    });
    this.CONSUME(RParen);
  });

  stray = this.RULE('stray', () => {
    const first = this.CONSUME(StrayStart);
    this.MANY({
      GATE: () => this.LA(1).startLine === first.startLine,
      DEF: () => this.CONSUME(AnyToken),
    });
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

/** The one parser instance of the process; `parseMtr` resets its input for each file. */
export const parser = new MtrParser();
