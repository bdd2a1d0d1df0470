/**
 * The app's durable functions by kind, and how to invoke one with a trigger payload. Lookups ignore
 * case, as the extension's `FunctionName` does; the error texts are the extension's own
 * (`DurableTaskExtension.GetInvalid…FunctionMessage`), since they end up in orchestration output.
 */
import { failedBeforeRun, type InvocationOutcome, type Invoker } from '../core/invoker';
import type { FunctionMetadata, RpcParameterBinding, RpcTypedData } from '../core/types';
import type { FunctionKind } from './replay';

const triggerOf: Record<FunctionKind, string> = {
  orchestrator: 'orchestrationtrigger',
  activity: 'activitytrigger',
  entity: 'entitytrigger',
};

interface Known {
  readonly name: string;
  readonly binding: string;
  /** Its other inputs, bound on each invocation (binding may fail, as on the real host). */
  readonly extraInputs: () => RpcParameterBinding[];
}

/** Input bindings other than the trigger (e.g. `durableClient` on an activity); throws when one cannot bind. */
export type ExtraInputs = (metadata: FunctionMetadata) => RpcParameterBinding[];

export class DurableFunctions {
  private readonly byKind: Record<FunctionKind, Map<string, Known>> = {
    orchestrator: new Map(),
    activity: new Map(),
    entity: new Map(),
  };

  constructor(
    /** The functions the host serves (disabled ones are refused like unknown ones, as by the extension). */
    functions: Iterable<FunctionMetadata>,
    private readonly invoker: Pick<Invoker, 'invoke'>,
    extraInputs: ExtraInputs = () => [],
  ) {
    for (const metadata of functions) {
      for (const [binding, info] of Object.entries(metadata.bindings)) {
        const type = info.type?.toLowerCase();
        for (const kind of Object.keys(triggerOf) as FunctionKind[]) {
          if (type === triggerOf[kind])
            this.byKind[kind].set(metadata.name.toLowerCase(), { name: metadata.name, binding, extraInputs: () => extraInputs(metadata) });
        }
      }
    }
  }

  has(kind: FunctionKind, name: string): boolean {
    return this.byKind[kind].has(name.toLowerCase());
  }

  names(kind: FunctionKind): string[] {
    return [...this.byKind[kind].values()].map((k) => k.name);
  }

  /** The extension's message for a missing function, or undefined when it exists. */
  check(kind: FunctionKind, name: string): string | undefined {
    if (this.has(kind, name)) return undefined;
    const label = kind === 'orchestrator' ? 'orchestrator' : kind;
    const known = this.names(kind);
    const info =
      known.length > 0
        ? `The following are the known ${label} functions: '${known.join("', '")}'.`
        : `No ${label} functions are currently registered!`;
    return `The function '${name}' doesn't exist, is disabled, or is not an ${label} function. Additional info: ${info}`;
  }

  invoke(kind: FunctionKind, name: string, data: RpcTypedData | undefined): Promise<InvocationOutcome> {
    const known = this.byKind[kind].get(name.toLowerCase());
    if (known === undefined) throw new Error(this.check(kind, name));
    let extra: RpcParameterBinding[];
    try {
      extra = known.extraInputs();
    } catch (err) {
      // A binding that fails fails the invocation before the function runs.
      return Promise.resolve(failedBeforeRun(err));
    }
    const inputData = [{ name: known.binding, data: data ?? null }, ...extra];
    return this.invoker.invoke({ functionName: known.name, inputData });
  }
}
