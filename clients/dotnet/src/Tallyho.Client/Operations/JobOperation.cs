using Tallyho.Client.Internal;
using Tallyho.Client.Jobs;

namespace Tallyho.Client.Operations;

/// <summary>A submitted job, done once it has settled (<c>completed</c>, <c>completedWithFailures</c> or <c>cancelled</c>).</summary>
public sealed class JobOperation : Operation<Job>
{
    /// <summary>Without a <c>Retry-After</c> (a resumed operation): batches finish in seconds.</summary>
    internal static readonly TimeSpan DefaultPollInterval = TimeSpan.FromSeconds(2);

    internal JobOperation(TallyhoHttp http, string id, TimeSpan pollInterval, Job? accepted, bool resumed)
        : base(http, id, pollInterval, resumed)
    {
        if (accepted is not null)
        {
            Observe(accepted);
        }
    }

    private protected override bool IsDone(Job state) => state.IsSettled;
}
