using Tallyho.Client.Gates;
using Tallyho.Client.Internal;

namespace Tallyho.Client.Operations;

/// <summary>A gated run, done once it has <c>failed</c>, or <c>proceeded</c> and its action is done.</summary>
public sealed class GateRunOperation : Operation<GateRun>
{
    /// <summary>Without a <c>Retry-After</c> (a resumed operation): a release is seldom seconds away.</summary>
    internal static readonly TimeSpan DefaultPollInterval = TimeSpan.FromSeconds(10);

    internal GateRunOperation(TallyhoHttp http, string id, TimeSpan pollInterval, bool resumed)
        : base(http, id, pollInterval, resumed)
    {
    }

    private protected override bool IsDone(GateRun state) => state.IsDone;
}
