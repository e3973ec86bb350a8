// Compile-time proof that the types other packages declare for the wire (answers and requests) are the SDK's
// schemas' types: the server is where @maitento/lang, the engine, the store and @maitento/sdk meet, so `tsc -b`
// fails here the moment one of them drifts (a field added, dropped, made optional or renamed on one side only).
import type * as engine from '@maitento/engine';
import type * as lang from '@maitento/lang';
import type * as sdk from '@maitento/sdk';
import type * as store from '@maitento/store';

/**
 * True when `A` and `B` are the same type. Mutual assignability is not enough: it takes an optional field that
 * one side lacks as equal, so this compares how each type decides a conditional type (TypeScript's own identity).
 */
export type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/** Compiles only for `true`. */
export type Assert<T extends true> = T;

/** Every pair checked; an entry that is not `true` is a compile error naming the drifted type. */
export type SameWireTypes = [
  Assert<Same<lang.Connector, sdk.Connector>>,
  Assert<Same<lang.Tool, sdk.Tool>>,
  Assert<Same<lang.Agent, sdk.Agent>>,
  Assert<Same<lang.Interaction, sdk.Interaction>>,
  Assert<Same<lang.ToolDefinition, sdk.ToolDefinition>>,
  Assert<Same<lang.Resource, sdk.Resource>>,
  Assert<Same<lang.Diagnostic, sdk.Diagnostic>>,
  Assert<Same<engine.RunView, sdk.RunView>>,
  Assert<Same<engine.ApprovalView, sdk.ApprovalView>>,
  Assert<Same<engine.RunEvent, sdk.RunEvent>>,
  Assert<Same<engine.Actor, sdk.Actor>>,
  Assert<Same<engine.RunStatus, sdk.RunStatus>>,
  Assert<Same<engine.ApprovalStatus, sdk.ApprovalStatus>>,
  Assert<Same<engine.RunEventType, sdk.RunEventType>>,
  Assert<Same<engine.RunSummary, sdk.RunSummary>>,
  Assert<Same<engine.RunPage, sdk.RunPage>>,
  Assert<Same<store.DeployPlan, sdk.DeployPlan>>,
  Assert<Same<store.KnowledgeBase, sdk.KnowledgeBase>>,
  Assert<Same<store.KnowledgeDocument, sdk.KnowledgeDocument>>,
  Assert<Same<store.KnowledgeSearchResult, sdk.KnowledgeSearchResult>>,
  Assert<Same<Awaited<ReturnType<typeof store.listTools>>[number], sdk.ExtopSummary>>,
  Assert<Same<Awaited<ReturnType<typeof store.listResources>>[number], sdk.ResourceSummary>>,
  Assert<Same<Awaited<ReturnType<typeof store.listVersions>>[number], sdk.VersionInfo>>,
  Assert<Same<Awaited<ReturnType<typeof store.setVersionEnabled>>, sdk.VersionState>>,
  Assert<Same<Awaited<ReturnType<typeof store.listApiKeys>>[number], sdk.KeyInfo>>,
  Assert<Same<Awaited<ReturnType<typeof store.createApiKey>>, sdk.CreatedKey>>,
  Assert<Same<Awaited<ReturnType<typeof store.secretKeyStatus>>, sdk.SecretKeyStatus>>,
  Assert<Same<store.SecretKeyRotation, Omit<sdk.SecretKeyRotation, 'status'>>>,
  // What requests carry: the engine's and the store's inputs are the SDK's request declarations (wire/requests.ts).
  Assert<Same<engine.StartRunInput, sdk.StartRunParams>>,
  Assert<Same<engine.ListRunsQuery, sdk.ListRunsParams>>,
  Assert<Same<engine.ListApprovalsQuery, sdk.ListApprovalsParams>>,
  Assert<Same<Pick<engine.ApprovalAnswer, 'reason'>, sdk.ApprovalAnswerParams>>,
  Assert<Same<lang.RepoFile, sdk.DeployFile>>,
  Assert<Same<store.KeyRole, sdk.KeyRole>>,
  Assert<Same<Parameters<typeof store.createSecret>[3], sdk.CreateSecretParams>>,
];
