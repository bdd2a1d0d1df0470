using Tallyho.Client.Internal;

namespace Tallyho.Client.Callers;

/// <summary>
/// Named callers: an admin issues a caller a credential with roles, lists them and revokes one (admin key);
/// <see cref="MeAsync"/> tells any caller who the app takes it for.
/// </summary>
public sealed class CallersClient
{
    private readonly TallyhoHttp _http;

    internal CallersClient(TallyhoHttp http) => _http = http;

    /// <summary>
    /// Issues <paramref name="name"/> a credential with <paramref name="roles"/> (<c>admin</c>, <c>submitter</c>, <c>worker:*</c>,
    /// <c>worker:&lt;processor&gt;</c>). The answer's <see cref="IssuedCaller.Credential"/> is shown this once. Not retried: a
    /// repeat would find the name taken.
    /// </summary>
    /// <param name="name">The caller's name; its id is <c>cred:&lt;name&gt;</c>.</param>
    /// <param name="roles">The roles it holds.</param>
    /// <param name="expiresInSeconds">Null: valid until revoked.</param>
    /// <param name="cancellationToken">Stops the call.</param>
    /// <returns>The caller, with its credential.</returns>
    public Task<IssuedCaller> IssueAsync(string name, IEnumerable<string> roles, int? expiresInSeconds = null, CancellationToken cancellationToken = default)
    {
        Guard.NotEmpty(name, nameof(name));
        var body = new IssueBody(name, Guard.NotNull(roles, nameof(roles)).ToArray(), expiresInSeconds);
        return _http.SendJsonAsync<IssuedCaller>(
            new TallyhoRequest(HttpMethod.Post, "callers") { Body = body, Key = KeyLevel.Admin, Idempotent = false },
            cancellationToken);
    }

    /// <summary>Every named caller with its roles and state; never a credential.</summary>
    /// <param name="cancellationToken">Stops the call.</param>
    /// <returns>The callers, in name order.</returns>
    public async Task<IReadOnlyList<NamedCaller>> ListAsync(CancellationToken cancellationToken = default)
    {
        var list = await _http
            .SendJsonAsync<CallerList>(new TallyhoRequest(HttpMethod.Get, "callers") { Key = KeyLevel.Admin, Idempotent = true }, cancellationToken)
            .ConfigureAwait(false);
        return list.Callers;
    }

    /// <summary>Revokes the caller's credential: refused at once by the instance that answers, everywhere within the server's revocation bound.</summary>
    /// <param name="name">The caller's name.</param>
    /// <param name="cancellationToken">Stops the call.</param>
    /// <returns>The caller, revoked.</returns>
    public Task<NamedCaller> RevokeAsync(string name, CancellationToken cancellationToken = default) =>
        _http.SendJsonAsync<NamedCaller>(
            new TallyhoRequest(HttpMethod.Delete, "callers/" + TallyhoHttp.Segment(Guard.NotEmpty(name, nameof(name)))) { Key = KeyLevel.Admin, Idempotent = true },
            cancellationToken);

    /// <summary>Who the app takes this client for: its caller id, kind, roles and what it holds.</summary>
    /// <param name="cancellationToken">Stops the call.</param>
    /// <returns>The caller.</returns>
    public Task<CallerSelf> MeAsync(CancellationToken cancellationToken = default) =>
        _http.SendJsonAsync<CallerSelf>(new TallyhoRequest(HttpMethod.Get, "callers/me") { Idempotent = true }, cancellationToken);

    private sealed record IssueBody(string Name, IReadOnlyList<string> Roles, [property: System.Text.Json.Serialization.JsonIgnore(Condition = System.Text.Json.Serialization.JsonIgnoreCondition.WhenWritingNull)] int? ExpiresInSeconds);

    private sealed record CallerList
    {
        public IReadOnlyList<NamedCaller> Callers { get; init; } = [];
    }
}
