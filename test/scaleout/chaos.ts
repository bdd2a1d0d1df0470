/**
 * The chaos driver: during the load it SIGKILLs instances (a crash: nothing drains) and starts them
 * again after a few seconds, and stops one gracefully (SIGTERM, as a scale-in does) and starts it
 * again later (scaling back out). Events are spread evenly over the load; the instance is chosen
 * round-robin, and one instance is always left up. Every event goes into the history, and every
 * instance life (start to end, with what it printed) into `lives`, which the checkers read (the
 * sequence blocks a killed instance held, the gaps an instance logged at its stop).
 */
import type { Cluster } from './cluster';
import { type History, sleep } from './history';
import type { Life } from './workload';

export class Lives {
  private readonly open = new Map<number, { startedAt: number; from: number }>();
  readonly done: Life[] = [];

  constructor(private readonly cluster: Cluster) {}

  begin(instance: number): void {
    this.open.set(instance, { startedAt: Date.now(), from: this.outputOf(instance).length });
  }

  end(instance: number, how: 'kill' | 'stop' | undefined): void {
    const life = this.open.get(instance);
    if (life === undefined) return;
    this.open.delete(instance);
    this.done.push({ instance, startedAt: life.startedAt, endedAt: Date.now(), how, output: this.outputOf(instance).slice(life.from) });
  }

  /** Every life, the open ones (still running) included. */
  all(): Life[] {
    const running = [...this.open].map(([instance, life]) => ({
      instance,
      startedAt: life.startedAt,
      endedAt: undefined,
      how: undefined,
      output: this.outputOf(instance).slice(life.from),
    }));
    return [...this.done, ...running].sort((a, b) => a.startedAt - b.startedAt);
  }

  private outputOf(instance: number): string {
    return this.cluster.instances[instance]?.output() ?? '';
  }
}

export interface ChaosPlan {
  readonly kills: number;
  readonly scaleIns: number;
  /** How long a killed instance stays down before it is started again. */
  readonly downMs?: number;
  /** How long a stopped (scaled-in) instance stays down. */
  readonly scaledInMs?: number;
}

export async function runChaos(
  cluster: Cluster,
  lives: Lives,
  history: History,
  plan: ChaosPlan,
  loadMs: number,
  say: (message: string) => void,
): Promise<void> {
  // The kills, with the scale-ins spread among them (after the first kill when there is one).
  const kinds: ('kill' | 'stop')[] = Array.from({ length: plan.kills }, () => 'kill');
  for (let s = 0; s < plan.scaleIns; s++) kinds.splice(Math.ceil(((s + 1) * kinds.length) / (plan.scaleIns + 1)), 0, 'stop');
  const began = Date.now();
  let victim = 0;
  for (const [i, how] of kinds.entries()) {
    const at = began + ((i + 1) * loadMs) / (kinds.length + 1);
    await sleep(Math.max(0, at - Date.now()));
    const up = cluster.instances.filter((inst) => inst.up).map((inst) => inst.index);
    if (up.length < 2) continue;
    const index = up.includes(victim % cluster.instances.length) ? victim % cluster.instances.length : (up[0] as number);
    victim = index + 1;
    const downMs = how === 'kill' ? (plan.downMs ?? 5_000) : (plan.scaledInMs ?? 15_000);
    history.event('chaos', how, { instance: index, worker: cluster.instances[index]?.worker });
    say(`chaos: ${how === 'kill' ? 'SIGKILL' : 'SIGTERM (scale-in)'} instance ${index}`);
    await (how === 'kill' ? cluster.kill(index) : cluster.stop(index));
    lives.end(index, how);
    history.event('chaos', how === 'kill' ? 'killed' : 'stopped', { instance: index });
    await sleep(downMs);
    await cluster.start(index);
    lives.begin(index);
    history.event('chaos', 'started', { instance: index });
    say(`chaos: instance ${index} is up again`);
  }
}
