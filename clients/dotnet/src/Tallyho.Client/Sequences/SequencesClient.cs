using Tallyho.Client.Internal;

namespace Tallyho.Client.Sequences;

/// <summary>The sequences as operators see them (admin key); numbers come from <see cref="SequenceClient"/>.</summary>
public sealed class SequencesClient
{
    private readonly TallyhoHttp _http;

    internal SequencesClient(TallyhoHttp http) => _http = http;

    /// <summary>Sequences with their settings and high-water marks, in name order.</summary>
    /// <param name="cancellationToken">Stops the listing.</param>
    /// <returns>The sequences, a page at a time.</returns>
    public AsyncPageable<SequenceInfo> ListAsync(CancellationToken cancellationToken = default) =>
        Lists.Of<SequenceInfo>(_http, "sequences", KeyLevel.Admin, cancellationToken);
}
