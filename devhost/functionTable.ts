/** The function list `func start` prints once the host is up, with the trigger detail per function. */
import type { FunctionSummary } from './admin';
import type { FunctionMetadata } from './core/types';
import { text } from './core/values';
import type { HostExtension } from './extension';

export interface TableOptions {
  readonly log: (line: string) => void;
  readonly extensions: readonly HostExtension[];
  readonly metadata: (name: string) => FunctionMetadata | undefined;
}

function detail(f: FunctionSummary, options: TableOptions): string {
  if (f.error !== undefined) return `[error] ${f.error}`;
  if (f.isDisabled) return `${f.trigger.type} [disabled]`;
  if (f.http !== undefined) {
    const methods = f.http.methods.length === 0 ? 'ALL' : f.http.methods.join(',');
    return `[${methods}] ${f.invoke_url_template ?? f.http.route}${f.http.authLevel === 'anonymous' ? '' : ` (${f.http.authLevel})`}`;
  }
  const trigger = f.config.bindings.find((b) => b.name === f.trigger.name);
  switch (f.trigger.type.toLowerCase()) {
    case 'queuetrigger':
      return `queueTrigger (queue: ${text(trigger?.queueName)})`;
    case 'timertrigger':
      return `timerTrigger (schedule: ${text(trigger?.schedule)}${trigger?.runOnStartup === true ? ', runOnStartup' : ''})`;
    default: {
      const metadata = options.metadata(f.name);
      const described =
        metadata === undefined ? undefined : options.extensions.map((e) => e.describe?.(metadata)).find((d) => d !== undefined);
      if (described !== undefined) return described;
      const served = options.extensions.some((e) => e.bindingTypes.some((t) => t.toLowerCase() === f.trigger.type.toLowerCase()));
      return served ? f.trigger.type : `${f.trigger.type} [not supported by the devhost: never triggered]`;
    }
  }
}

export function printFunctionTable(functions: readonly FunctionSummary[], options: TableOptions): void {
  options.log('');
  options.log('Functions:');
  options.log('');
  if (functions.length === 0) options.log('\tNo functions registered: check that package.json "main" points at the built entry files.');
  for (const f of functions) options.log(`\t${f.name}: ${detail(f, options)}`);
  options.log('');
}
