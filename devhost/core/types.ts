/**
 * The `@azure/functions-core` contract between a Functions host (the Node worker) and the
 * `@azure/functions` library, as the worker defines it. The package is not published, so the
 * shapes the devhost relies on are written down here.
 */

/** Typed data on the wire between host and worker (one member is set). */
export interface RpcTypedData {
  string?: string | null;
  json?: string | null;
  bytes?: Uint8Array | null;
  stream?: Uint8Array | null;
  http?: RpcHttpData | null;
  int?: number | null;
  double?: number | null;
  collectionBytes?: { bytes?: Uint8Array[] | null } | null;
  collectionString?: { string?: string[] | null } | null;
  collectionDouble?: { double?: number[] | null } | null;
  collectionSint64?: { sint64?: number[] | null } | null;
}

export interface RpcHttpData {
  method?: string | null;
  url?: string | null;
  headers?: Record<string, string> | null;
  body?: RpcTypedData | null;
  params?: Record<string, string> | null;
  statusCode?: string | null;
  query?: Record<string, string> | null;
  enableContentNegotiation?: boolean | null;
  identities?: unknown[] | null;
  cookies?: RpcHttpCookie[] | null;
  nullableHeaders?: Record<string, { value?: string | null }> | null;
  nullableParams?: Record<string, { value?: string | null }> | null;
  nullableQuery?: Record<string, { value?: string | null }> | null;
}

export interface RpcHttpCookie {
  name?: string | null;
  value?: string | null;
  domain?: { value?: string | null } | null;
  path?: { value?: string | null } | null;
  expires?: { value?: { seconds?: number | null; nanos?: number | null } | null } | null;
  secure?: { value?: boolean | null } | null;
  httpOnly?: { value?: boolean | null } | null;
  sameSite?: string | number | null;
  maxAge?: { value?: number | null } | null;
}

export interface RpcBindingInfo {
  type?: string | null;
  direction?: 'in' | 'out' | 'inout' | null;
  dataType?: string | null;
  properties?: Record<string, string> | null;
  /** Binding-specific options (route, queueName, schedule, connection, ...). */
  [option: string]: unknown;
}

/** A binding with its name (the key it has in `FunctionMetadata.bindings`). */
export interface NamedBinding extends RpcBindingInfo {
  readonly name: string;
}

interface RpcRetryOptions {
  maxRetryCount?: number | null;
  delayInterval?: { seconds?: number | null; nanos?: number | null } | null;
  minimumInterval?: { seconds?: number | null; nanos?: number | null } | null;
  maximumInterval?: { seconds?: number | null; nanos?: number | null } | null;
  retryStrategy?: string | null;
}

export interface FunctionMetadata {
  name: string;
  functionId?: string | null;
  bindings: Record<string, RpcBindingInfo>;
  retryOptions?: RpcRetryOptions | null;
}

export type FunctionCallback = (...args: unknown[]) => unknown;

export interface RpcParameterBinding {
  name?: string | null;
  data?: RpcTypedData | null;
}

interface RpcInvocationRequest {
  invocationId?: string | null;
  functionId?: string | null;
  inputData?: RpcParameterBinding[] | null;
  triggerMetadata?: Record<string, RpcTypedData> | null;
  traceContext?: { traceParent?: string | null; traceState?: string | null; attributes?: Record<string, string> | null } | null;
  retryContext?: { retryCount?: number | null; maxRetryCount?: number | null; exception?: unknown } | null;
}

export interface RpcInvocationResponse {
  invocationId?: string | null;
  outputData?: RpcParameterBinding[] | null;
  returnValue?: RpcTypedData | null;
}

export type RpcLogLevel = 'trace' | 'debug' | 'information' | 'warning' | 'error' | 'critical' | 'none';
export type RpcLogCategory = 'user' | 'system' | 'customMetric';

export interface CoreInvocationContext {
  invocationId: string;
  request: RpcInvocationRequest;
  metadata: FunctionMetadata;
  state?: 'preInvocationHooks' | 'postInvocationHooks' | 'invocation';
  log(level: RpcLogLevel, category: RpcLogCategory, message: string): void;
}

interface InvocationArguments {
  context: unknown;
  inputs: unknown[];
}

interface InvocationModel {
  getArguments(): Promise<InvocationArguments>;
  invokeFunction(context: unknown, inputs: unknown[], callback: FunctionCallback): Promise<unknown>;
  getResponse(context: unknown, result: unknown): Promise<RpcInvocationResponse>;
}

interface WorkerCapabilities {
  [capability: string]: string;
}

export interface ProgrammingModel {
  name: string;
  version: string;
  getInvocationModel(context: CoreInvocationContext): InvocationModel | Promise<InvocationModel>;
  getCapabilities?(capabilities: WorkerCapabilities): WorkerCapabilities | Promise<WorkerCapabilities>;
}

export type HookName = 'preInvocation' | 'postInvocation' | 'appStart' | 'appTerminate' | 'log';

export type HookCallback = (context: Record<string, unknown>) => unknown;

export interface Disposable {
  dispose(): void;
}
