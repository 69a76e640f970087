import { UnavailableError } from '../core/errors.js';
import type { RunningCall } from '../core/running-call.js';
import type { TaskIntake } from '../core/task-intake.js';
import type { NewTask, TaskRecord } from '../core/task.js';
import type { JobCreation } from './job-creation.js';
import type { WorkQueue } from './work-queue.js';

/** What runs a job this replica holds from its task's creation (the TaskRunner). */
export interface HeldJobRunner {
  /** Runs a task created here, as a taken job would run. */
  runCreated(task: TaskRecord, released: AbortSignal): Promise<void>;
  /** Goes on with a call that already runs here, writing its input, progress and outcome to the task. */
  adopt(task: TaskRecord, call: RunningCall, released: AbortSignal): Promise<void>;
}

export interface IntakeOptions {
  creation: JobCreation;
  queue: Pick<WorkQueue, 'reserve'>;
  runner: HeldJobRunner;
  /**
   * A replica that runs jobs (roles `all`, `worker`) runs the tasks it creates itself while it
   * has room: no queue hop, no second read of the record. An `api` replica queues them.
   */
  runsCreated: boolean;
}

/**
 * The replica's intake (docs/decisions/0032-durable-when-it-must-be.md): a created task's job
 * runs here when this replica may and has room, else it is queued for any worker; an adopted
 * call always goes on here, as a job leased to this replica.
 */
export class Intake implements TaskIntake {
  constructor(private readonly options: IntakeOptions) {}

  async create(task: NewTask): Promise<TaskRecord> {
    const { creation, queue, runner, runsCreated } = this.options;
    const place = runsCreated ? queue.reserve(false) : undefined;
    if (!place) return creation.queued(task);
    // It starts now: the tasks/create dialect reads `running` from the first poll.
    const record = await creation.held({ ...task, startedAt: task.startedAt ?? task.createdAt }, place);
    place.run(record.taskId, (released) => runner.runCreated(record, released));
    return record;
  }

  async adopt(task: NewTask, call: RunningCall): Promise<TaskRecord> {
    const place = this.options.queue.reserve(true);
    if (!place) throw new UnavailableError('this replica (it is shutting down)');
    const record = await this.options.creation.held(task, place);
    place.run(record.taskId, (released) => this.options.runner.adopt(record, call, released));
    return record;
  }
}
