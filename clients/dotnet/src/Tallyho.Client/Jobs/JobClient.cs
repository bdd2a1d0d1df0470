using System.Runtime.CompilerServices;
using Tallyho.Client.Internal;
using Tallyho.Client.Operations;

namespace Tallyho.Client.Jobs;

/// <summary>
/// Batched jobs: submit many items at once, follow the progress until every item has settled, then page
/// through the results and the failures with their reasons. A submission always carries an
/// <c>Idempotency-Key</c> (yours, or one made per call), so a retried submission never makes a second job.
/// </summary>
public sealed class JobClient
{
    private readonly TallyhoHttp _http;

    internal JobClient(TallyhoHttp http) => _http = http;

    /// <summary>
    /// Submits a job and returns it as accepted, without waiting: a job may run for hours, and what a submitter
    /// usually does next is keep its id. <see cref="StartSubmitAsync{TItem}"/> returns an operation to wait on.
    /// </summary>
    /// <typeparam name="TItem">The item type; each serializes to a JSON object with a unique string <c>id</c>.</typeparam>
    /// <param name="processor">What processes the items: an in-app processor, or a declared external or webhook one.</param>
    /// <param name="items">The items.</param>
    /// <param name="idempotencyKey">Makes a resubmission return the same job; one is made for this call when null.</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The accepted job.</returns>
    public async Task<Job> SubmitAsync<TItem>(string processor, IEnumerable<TItem> items, string? idempotencyKey = null, CancellationToken cancellationToken = default)
    {
        using var response = await PostAsync(processor, items, idempotencyKey, cancellationToken).ConfigureAwait(false);
        return await TallyhoHttp.ReadJsonAsync<Job>(response, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// Submits a job and returns it as an operation, done once the job has settled:
    /// <c>await op.WaitForCompletionAsync(ct)</c> is the settled job, read every <c>Retry-After</c>.
    /// </summary>
    /// <typeparam name="TItem">The item type; each serializes to a JSON object with a unique string <c>id</c>.</typeparam>
    /// <param name="processor">What processes the items: an in-app processor, or a declared external or webhook one.</param>
    /// <param name="items">The items.</param>
    /// <param name="idempotencyKey">Makes a resubmission return the same job; one is made for this call when null.</param>
    /// <param name="cancellationToken">Cancels the request (not the job).</param>
    /// <returns>The job as an operation; its <see cref="Operation{T}.Id"/> resumes it (<see cref="ResumeOperation"/>).</returns>
    public async Task<JobOperation> StartSubmitAsync<TItem>(string processor, IEnumerable<TItem> items, string? idempotencyKey = null, CancellationToken cancellationToken = default)
    {
        using var response = await PostAsync(processor, items, idempotencyKey, cancellationToken).ConfigureAwait(false);
        var job = await TallyhoHttp.ReadJsonAsync<Job>(response, cancellationToken).ConfigureAwait(false);
        return new JobOperation(_http, Accepted.StatusUri(response), Accepted.RetryAfter(response, JobOperation.DefaultPollInterval), job, resumed: false);
    }

    /// <summary>The operation of a job submitted earlier (here or in another process), from its <see cref="Operation{T}.Id"/>; nothing is submitted.</summary>
    /// <param name="id">The operation's id: the job's status route.</param>
    /// <returns>The operation; it reads the job at once when waited for.</returns>
    /// <exception cref="ArgumentException">The id is not a job's.</exception>
    public JobOperation ResumeOperation(string id)
    {
        if (id is null || !id.StartsWith("/api/jobs/", StringComparison.Ordinal))
        {
            throw new ArgumentException($"Not the id of a job operation: {id}", nameof(id));
        }

        return new JobOperation(_http, id, JobOperation.DefaultPollInterval, accepted: null, resumed: true);
    }

    /// <summary>A job's state and totals.</summary>
    /// <param name="id">The job's id.</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The job.</returns>
    public Task<Job> GetAsync(string id, CancellationToken cancellationToken = default) =>
        _http.SendJsonAsync<Job>(new TallyhoRequest(HttpMethod.Get, Path(id)) { Idempotent = true }, cancellationToken);

    /// <summary>
    /// The job's progress: its state now, then each change, until it has settled (the last one yielded is settled).
    /// </summary>
    /// <param name="id">The job's id.</param>
    /// <param name="pollInterval">How often to look (default 1 s).</param>
    /// <param name="cancellationToken">Stops following.</param>
    /// <returns>The job at each change.</returns>
    public async IAsyncEnumerable<Job> WatchAsync(string id, TimeSpan? pollInterval = null, [EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        Job? last = null;
        while (true)
        {
            var job = await GetAsync(id, cancellationToken).ConfigureAwait(false);
            if (last is null || job.State != last.State || job.Totals != last.Totals || job.Round != last.Round)
            {
                yield return job;
            }

            if (job.IsSettled)
            {
                yield break;
            }

            last = job;
            await Clock.Sleep(_http.Time, pollInterval ?? TimeSpan.FromSeconds(1), cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>The item results, in item-id order.</summary>
    /// <param name="id">The job's id.</param>
    /// <param name="status">Only <c>succeeded</c>, <c>failed</c>, <c>cancelled</c> or <c>retrying</c> results, if given.</param>
    /// <param name="cancellationToken">Stops the listing.</param>
    /// <returns>The results, a page at a time.</returns>
    public AsyncPageable<JobResult> GetResultsAsync(string id, string? status = null, CancellationToken cancellationToken = default) =>
        Lists.Of<JobResult>(_http, $"{Path(id)}/results", new Dictionary<string, string?> { ["status"] = status }, KeyLevel.Function, cancellationToken);

    /// <summary>The failed items with their reasons, in item-id order.</summary>
    /// <param name="id">The job's id.</param>
    /// <param name="cancellationToken">Stops the listing.</param>
    /// <returns>The failures, a page at a time.</returns>
    public AsyncPageable<JobFailure> GetFailuresAsync(string id, CancellationToken cancellationToken = default) =>
        Lists.Of<JobFailure>(_http, $"{Path(id)}/failures", KeyLevel.Function, cancellationToken);

    /// <summary>Jobs with their progress, in job id order (admin key): time-ordered ids oldest first, then Idempotency-Key jobs.</summary>
    /// <param name="cancellationToken">Stops the listing.</param>
    /// <returns>The jobs, a page at a time.</returns>
    public AsyncPageable<Job> ListAsync(CancellationToken cancellationToken = default) => Lists.Of<Job>(_http, "jobs", KeyLevel.Admin, cancellationToken);

    /// <summary>Runs the failed items of a completed job again (admin key when configured).</summary>
    /// <param name="id">The job's id.</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The job, running again.</returns>
    /// <exception cref="TallyhoException">With code <c>Conflict</c> when the job is running or has no failures.</exception>
    public Task<Job> RetryFailedAsync(string id, CancellationToken cancellationToken = default) =>
        _http.SendJsonAsync<Job>(new TallyhoRequest(HttpMethod.Post, $"{Path(id)}/retry-failed") { Idempotent = true, Key = KeyLevel.Admin }, cancellationToken);

    /// <summary>
    /// Cancels a job and returns it as an operation, done once the job is <c>cancelled</c>: the server answers as soon as
    /// the job is <c>cancelling</c> (its leases are refused from then on) and writes its items without a result
    /// <c>cancelled</c> in the background; <c>await op.WaitForCompletionAsync(ct)</c> is the cancelled job.
    /// </summary>
    /// <param name="id">The job's id.</param>
    /// <param name="cancellationToken">Cancels the request (not the cancel).</param>
    /// <returns>The cancel as an operation; its <see cref="Operation{T}.Id"/> resumes it (<see cref="ResumeOperation"/>).</returns>
    /// <exception cref="TallyhoException">With code <c>Conflict</c> when the job has finished.</exception>
    public async Task<JobOperation> StartCancelAsync(string id, CancellationToken cancellationToken = default)
    {
        using var response = await _http.SendAsync(new TallyhoRequest(HttpMethod.Delete, Path(id)) { Idempotent = true }, cancellationToken).ConfigureAwait(false);
        var job = await TallyhoHttp.ReadJsonAsync<Job>(response, cancellationToken).ConfigureAwait(false);
        return new JobOperation(_http, Accepted.StatusUri(response), Accepted.RetryAfter(response, TimeSpan.FromSeconds(1)), job, resumed: false);
    }

    /// <summary>Cancels a job and waits until it is <c>cancelled</c> (<see cref="StartCancelAsync"/> returns the operation instead).</summary>
    /// <param name="id">The job's id.</param>
    /// <param name="cancellationToken">Stops the waiting (the cancel goes on).</param>
    /// <returns>The job, cancelled.</returns>
    /// <exception cref="TallyhoException">With code <c>Conflict</c> when the job has finished.</exception>
    public async Task<Job> CancelAsync(string id, CancellationToken cancellationToken = default)
    {
        var operation = await StartCancelAsync(id, cancellationToken).ConfigureAwait(false);
        return await operation.WaitForCompletionAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Declares (or changes) an external or webhook processor (admin key). A new webhook processor's answer carries its secret, once.</summary>
    /// <param name="name">The processor's name.</param>
    /// <param name="declaration">The declaration, e.g. <c>new { type = "external", batchSize = 50 }</c> (see the API reference).</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The declared processor, as JSON (with <c>secret</c> when a new webhook processor got one).</returns>
    public Task<System.Text.Json.JsonElement> DeclareProcessorAsync(string name, object declaration, CancellationToken cancellationToken = default) =>
        _http.SendJsonAsync<System.Text.Json.JsonElement>(
            new TallyhoRequest(HttpMethod.Put, "processors/" + TallyhoHttp.Segment(name)) { Body = Guard.NotNull(declaration, nameof(declaration)), Key = KeyLevel.Admin, Idempotent = true },
            cancellationToken);

    private static string Path(string id) => "jobs/" + TallyhoHttp.Segment(id);

    private Task<HttpResponseMessage> PostAsync<TItem>(string processor, IEnumerable<TItem> items, string? idempotencyKey, CancellationToken cancellationToken)
    {
        Guard.NotEmpty(processor, nameof(processor));
        Guard.NotNull(items, nameof(items));
        return _http.SendAsync(
            new TallyhoRequest(HttpMethod.Post, "jobs")
            {
                Body = new Submission<TItem>(processor, items.ToArray()),
                IdempotencyKey = idempotencyKey ?? Guid.NewGuid().ToString("N"),
                Idempotent = true,
            },
            cancellationToken);
    }

    private sealed record Submission<TItem>(string Processor, IReadOnlyList<TItem> Items);
}
