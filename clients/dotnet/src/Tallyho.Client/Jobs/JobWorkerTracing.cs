using System.Diagnostics;

namespace Tallyho.Client.Jobs;

/// <summary>
/// How <see cref="JobWorker"/> traces a batch, as OpenTelemetry's messaging conventions have a consumer process one:
/// an <see cref="Activity"/> <c>process {processor}</c> (kind Consumer) whose parent is the lease's traceparent (the
/// app's receive span, <see cref="Lease.Traceparent"/>) and that links each item's job submission
/// (<see cref="LeasedItem.Traceparent"/>). The handler runs inside it, so its own activities are children. Nothing is
/// created unless something listens: with the OpenTelemetry SDK, <c>AddSource(JobWorkerTracing.SourceName)</c>.
/// </summary>
public static class JobWorkerTracing
{
    /// <summary>The name of the <see cref="ActivitySource"/> the worker's activities come from.</summary>
    public const string SourceName = "Tallyho.Client.JobWorker";

    private static readonly ActivitySource Source = new(SourceName);

    internal static Activity? StartProcess(Lease lease)
    {
        if (!Source.HasListeners())
        {
            return null;
        }

        // No traceparent (the app does not trace): a root activity of the worker's own.
        _ = ActivityContext.TryParse(lease.Traceparent, null, out var parent);
        var links = new List<ActivityLink>();
        foreach (var traceparent in lease.Items.Select(i => i.Traceparent).Distinct(StringComparer.Ordinal))
        {
            if (ActivityContext.TryParse(traceparent, null, out var linked))
            {
                links.Add(new ActivityLink(linked));
            }
        }

        var tags = new ActivityTagsCollection
        {
            ["messaging.operation.type"] = "process",
            ["messaging.operation.name"] = "process",
            ["messaging.destination.name"] = lease.Processor,
            ["messaging.batch.message_count"] = lease.Items.Count,
        };
        return Source.StartActivity($"process {lease.Processor}", ActivityKind.Consumer, parent, tags, links);
    }
}
