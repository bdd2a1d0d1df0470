using System.Globalization;
using Tallyho.Client.Internal;

namespace Tallyho.Client.Schedules;

/// <summary>
/// Schedules: one-off and recurring runs of a target (a gate release, a job, a queue or Service Bus
/// message, a webhook). Listing, cancelling, pausing, resuming and triggering send the admin key when
/// one is configured.
/// </summary>
public sealed class ScheduleClient
{
    private readonly TallyhoHttp _http;

    internal ScheduleClient(TallyhoHttp http) => _http = http;

    /// <summary>
    /// Creates a schedule; the same id with the same definition again returns it (safe to retry). A
    /// target that is an admin action (<see cref="ScheduleTarget.IsAdminAction"/>) is sent to
    /// <c>POST /api/schedules/privileged</c> with the admin key; the function-level route refuses it.
    /// </summary>
    /// <param name="request">The schedule.</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The schedule with its next fire time.</returns>
    /// <exception cref="TallyhoException">With code <c>Conflict</c> when the id exists with another definition.</exception>
    public Task<Schedule> CreateAsync(ScheduleRequest request, CancellationToken cancellationToken = default)
    {
        Guard.NotNull(request, nameof(request));
        var target = Guard.NotNull(request.Target, "request.Target");
        var body = new Dictionary<string, object?>
        {
            ["id"] = request.Id,
            ["at"] = request.At?.ToUniversalTime().ToString("yyyy-MM-dd'T'HH:mm:ss.fff'Z'", CultureInfo.InvariantCulture),
            ["cron"] = request.Cron,
            ["timeZone"] = request.TimeZone,
            ["target"] = target.Fields.Where(f => f.Value is not null).ToDictionary(f => f.Key, f => f.Value),
            ["overlap"] = request.Overlap,
            ["catchUp"] = request.CatchUp,
        };
        return _http.SendJsonAsync<Schedule>(
            new TallyhoRequest(HttpMethod.Post, target.IsAdminAction ? "schedules/privileged" : "schedules")
            {
                Body = body.Where(f => f.Value is not null).ToDictionary(f => f.Key, f => f.Value),
                Idempotent = request.Id is not null,
                Key = target.IsAdminAction ? KeyLevel.Admin : KeyLevel.Function,
            },
            cancellationToken);
    }

    /// <summary>A schedule with its state, next fire time and recent runs.</summary>
    /// <param name="id">The schedule's id.</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The schedule.</returns>
    public Task<Schedule> GetAsync(string id, CancellationToken cancellationToken = default) =>
        _http.SendJsonAsync<Schedule>(new TallyhoRequest(HttpMethod.Get, Path(id)) { Idempotent = true }, cancellationToken);

    /// <summary>
    /// A schedule with everything the admin key may see. A schedule an admin created is the admin's: <see cref="GetAsync"/>
    /// with a function key answers 404 for it (docs/security.md, ownership).
    /// </summary>
    /// <param name="id">The schedule's id.</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The schedule.</returns>
    public Task<Schedule> GetPrivilegedAsync(string id, CancellationToken cancellationToken = default) =>
        _http.SendJsonAsync<Schedule>(new TallyhoRequest(HttpMethod.Get, Path(id) + "/privileged") { Idempotent = true, Key = KeyLevel.Admin }, cancellationToken);

    /// <summary>Schedules in id order (admin key), optionally in one state.</summary>
    /// <param name="state">Only schedules in this state, if given.</param>
    /// <param name="cancellationToken">Stops the listing.</param>
    /// <returns>The schedules, a page at a time.</returns>
    public AsyncPageable<Schedule> ListAsync(string? state = null, CancellationToken cancellationToken = default) =>
        Lists.Of<Schedule>(_http, "schedules", new Dictionary<string, string?> { ["state"] = state }, KeyLevel.Admin, cancellationToken);

    /// <summary>Cancels a schedule: it never fires again.</summary>
    /// <param name="id">The schedule's id.</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The schedule.</returns>
    public Task<Schedule> CancelAsync(string id, CancellationToken cancellationToken = default) =>
        _http.SendJsonAsync<Schedule>(new TallyhoRequest(HttpMethod.Delete, Path(id)) { Idempotent = true, Key = KeyLevel.Admin }, cancellationToken);

    /// <summary>Pauses a schedule: fires are skipped until it is resumed.</summary>
    /// <param name="id">The schedule's id.</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The schedule.</returns>
    public Task<Schedule> PauseAsync(string id, CancellationToken cancellationToken = default) => ControlAsync(id, "pause", cancellationToken);

    /// <summary>Resumes a paused schedule with its next fire.</summary>
    /// <param name="id">The schedule's id.</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The schedule.</returns>
    public Task<Schedule> ResumeAsync(string id, CancellationToken cancellationToken = default) => ControlAsync(id, "resume", cancellationToken);

    /// <summary>Runs the target now (also while paused); the overlap policy applies.</summary>
    /// <param name="id">The schedule's id.</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The trigger's id and the schedule.</returns>
    public Task<ScheduleTrigger> TriggerAsync(string id, CancellationToken cancellationToken = default) =>
        _http.SendJsonAsync<ScheduleTrigger>(new TallyhoRequest(HttpMethod.Post, Path(id) + "/trigger") { Key = KeyLevel.Admin }, cancellationToken);

    private static string Path(string id) => "schedules/" + TallyhoHttp.Segment(id);

    private Task<Schedule> ControlAsync(string id, string action, CancellationToken cancellationToken) =>
        _http.SendJsonAsync<Schedule>(new TallyhoRequest(HttpMethod.Post, $"{Path(id)}/{action}") { Idempotent = true, Key = KeyLevel.Admin }, cancellationToken);
}
