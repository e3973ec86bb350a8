export type * from './syntax/ast.js';
export type * from './diagnostics/diagnostic.js';
export type * from './config/resources.js';
// ---- syntax: parser, diagnostics rendering, formatter ----
export { langErrors } from './errors.js';
export { MAX_NESTING, parseMtr } from './syntax/parse.js';
export type { ParseResult } from './syntax/parse.js';
export { didYouMean, editDistance } from './diagnostics/did-you-mean.js';
export { formatDiagnostic, formatDiagnostics } from './diagnostics/format.js';
export { FORMAT_WIDTH, formatMtr } from './format/format-mtr.js';
export type { FormatResult } from './format/format-mtr.js';
// ---- config compiler ----
export { compileRepo, RepoChecker } from './config/compile-repo.js';
export type { CompiledRepo, CompileOptions, ResourceSource } from './config/compile-repo.js';
export type { RepoFile } from './config/repo-layout.js';
export { readConfigRepo } from './repo/read-config-repo.js';
export { TOP_FOLDERS } from './config/repo-layout.js';
export { configRepoFiles, filesUnder, isConfigRepo } from './repo/repo-files.js';
export { resolveLocalRef } from './config/json-schema-dialect.js';
export { nullable, toolDefinition } from './config/tool-definition.js';
export type { RunBound } from './config/tool-definition.js';
export { interactionTools, runBoundFields } from './config/interaction-tools.js';
export type { InteractionAgentTools, InteractionTool, SubAgentTool, ToolSources } from './config/interaction-tools.js';
export { AJV_OPTIONS } from './config/json-schema-check.js';
export { functionName, MODEL_PROVIDERS, parseModel, subAgentsOf } from './config/agent-checks.js';
export { DIALECT_URIS, newAjv, schemaDialect } from './config/json-schema-dialect.js';
export type { SchemaDialect } from './config/json-schema-dialect.js';
export type { ModelProvider, ModelRef } from './config/agent-checks.js';
// ---- editors (the language server of `mt lsp`) ----
export { classifyPath } from './config/repo-layout.js';
export type { Property, RefKind, Shape } from './config/shape.js';
export {
  describeProperty,
  describeShape,
  editorContext,
  fileShape,
  refKindAt,
  shapeAt,
} from './editor/context.js';
export type { EditorContext, ShapeStep, Word } from './editor/context.js';
export { cronProblem, dueTicks, isTimeZone, nextTick } from './config/schedule-time.js';
export type { DueTicks } from './config/schedule-time.js';
export { DEFAULT_TRIGGER_BODY, MAX_TRIGGER_BODY } from './config/kind-shapes.js';
