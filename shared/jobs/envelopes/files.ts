/**
 * Job blobs in the `jobs` container: `<job>/input-<hash>.ndjson` (the submitted items, what claim checks
 * point into), `<job>/rounds/<k>.ids` (the items retry-failed round k re-runs) and
 * `<job>/files/<name>` (what the processor's finalize step writes, e.g. `wordcount.csv`).
 */
import type { ContainerClient } from '@azure/storage-blob';

import { AppError } from '../../errors';
import { hasStatus, translateStorageError } from '../../storage/errors';
import type { ClaimCheck } from './envelope';
import { fileNamePattern } from './ids';
import { sha256Hex } from './input';

/** Which job and which input (a job's input blob is named after its hash). */
export interface InputRef {
  readonly id: string;
  readonly inputSha256: string;
}

export interface JobFile {
  readonly body: Buffer;
  readonly contentType: string;
}

export class JobFiles {
  constructor(
    private readonly container: () => Promise<ContainerClient>,
    /** The container's name, as claim-check references carry it. */
    readonly containerName: string,
  ) {}

  /**
   * Named after its content too: two submissions racing with one Idempotency-Key but different
   * items cannot overwrite each other's input (the loser gets a 409 and its blob is never used).
   */
  inputBlob(input: InputRef): string {
    return `${input.id}/input-${input.inputSha256.slice(0, 16)}.ndjson`;
  }

  /** The claim-check reference of a job's input: `<container>/<blob>`. */
  inputRef(input: InputRef): string {
    return `${this.containerName}/${this.inputBlob(input)}`;
  }

  async writeInput(input: InputRef, text: string): Promise<void> {
    await this.upload(this.inputBlob(input), 'application/x-ndjson', text, `writing the input of job ${input.id}`);
  }

  async readInput(input: InputRef): Promise<string | undefined> {
    return this.download(this.inputBlob(input), `reading the input of job ${input.id}`);
  }

  async writeRoundItems(jobId: string, round: number, ids: readonly string[]): Promise<void> {
    await this.upload(
      `${jobId}/rounds/${round}.ids`,
      'text/plain',
      ids.map((id) => `${id}\n`).join(''),
      `writing round ${round} of job ${jobId}`,
    );
  }

  async readRoundItems(jobId: string, round: number): Promise<string[] | undefined> {
    const text = await this.download(`${jobId}/rounds/${round}.ids`, `reading round ${round} of job ${jobId}`);
    return text?.split('\n').filter((id) => id !== '');
  }

  /**
   * The item a claim check refers to. A missing blob or bytes that do not hash to the reference are
   * not the item's fault and no retry of the item fixes them: this throws, the envelope fails every
   * delivery, and the poison handler records the reason for all its items.
   */
  async redeem(check: ClaimCheck): Promise<string> {
    const prefix = `${this.containerName}/`;
    if (!check.blob.startsWith(prefix)) throw new AppError('CorruptState', `Claim check points outside the jobs container: ${check.blob}`);
    const blob = check.blob.slice(prefix.length);
    let bytes: Buffer;
    try {
      bytes = await (await this.container()).getBlobClient(blob).downloadToBuffer(check.offset, check.length);
    } catch (err) {
      if (hasStatus(err, 404)) throw new AppError('CorruptState', `Claim check cannot be redeemed: blob ${check.blob} does not exist`);
      throw translateStorageError(err, `redeeming a claim check on ${check.blob}`);
    }
    if (bytes.length !== check.length || sha256Hex(bytes) !== check.sha256) {
      throw new AppError(
        'CorruptState',
        `Claim check cannot be redeemed: bytes ${check.offset}+${check.length} of ${check.blob} do not match its SHA-256`,
      );
    }
    return bytes.toString('utf8');
  }

  /** Writes a processor file; returns its name. */
  async writeFile(jobId: string, name: string, contentType: string, body: string): Promise<string> {
    if (!fileNamePattern.test(name)) throw new AppError('Internal', `A processor wrote a file with an unusable name: ${name}`);
    await this.upload(`${jobId}/files/${name}`, contentType, body, `writing ${name} of job ${jobId}`);
    return name;
  }

  async readFile(jobId: string, name: string): Promise<JobFile | undefined> {
    try {
      const blob = (await this.container()).getBlobClient(`${jobId}/files/${name}`);
      const response = await blob.download();
      const chunks: Buffer[] = [];
      for await (const chunk of response.readableStreamBody ?? []) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
      return { body: Buffer.concat(chunks), contentType: response.contentType ?? 'application/octet-stream' };
    } catch (err) {
      if (hasStatus(err, 404)) return undefined;
      throw translateStorageError(err, `reading ${name} of job ${jobId}`);
    }
  }

  /** Deletes every blob of the job (input, rounds, files). */
  async removeJob(jobId: string): Promise<number> {
    const container = await this.container();
    let removed = 0;
    try {
      for await (const blob of container.listBlobsFlat({ prefix: `${jobId}/` })) {
        await container.deleteBlob(blob.name, { deleteSnapshots: 'include' }).catch((err: unknown) => {
          if (!hasStatus(err, 404)) throw err;
        });
        removed++;
      }
    } catch (err) {
      throw translateStorageError(err, `deleting the files of job ${jobId}`);
    }
    return removed;
  }

  private async upload(name: string, contentType: string, text: string, doing: string): Promise<void> {
    const body = Buffer.from(text, 'utf8');
    try {
      await (
        await this.container()
      )
        .getBlockBlobClient(name)
        .upload(body, body.length, { blobHTTPHeaders: { blobContentType: contentType } });
    } catch (err) {
      throw translateStorageError(err, doing);
    }
  }

  private async download(name: string, doing: string): Promise<string | undefined> {
    try {
      return (await (await this.container()).getBlobClient(name).downloadToBuffer()).toString('utf8');
    } catch (err) {
      if (hasStatus(err, 404)) return undefined;
      throw translateStorageError(err, doing);
    }
  }
}
