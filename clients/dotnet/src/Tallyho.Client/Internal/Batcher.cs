namespace Tallyho.Client.Internal;

/// <summary>How a <see cref="Batcher{TItem, TResult}"/> groups items and sends them.</summary>
internal sealed class BatchPolicy<TItem, TResult>
{
    /// <summary>Batches out at once; they still leave in order.</summary>
    public int MaxInFlight { get; init; } = 4;

    /// <summary>How long a batch waits for more items after its first; zero: only until the adding thread yields.</summary>
    public TimeSpan Linger { get; init; }

    public TimeProvider Time { get; init; } = TimeProvider.System;

    /// <summary>Items of different kinds (e.g. another ack mode) never share a batch.</summary>
    public Func<TItem, string>? Kind { get; init; }

    /// <summary>An item's share of the batch bound; a lone item goes whatever its size.</summary>
    public Func<TItem, long> Size { get; init; } = _ => 1;

    public long MaxSize { get; init; } = long.MaxValue;

    /// <summary>Sends one batch; returns one result per item, in the same order.</summary>
    public Func<IReadOnlyList<TItem>, Task<IReadOnlyList<TResult>>> Send { get; init; } = _ => throw new InvalidOperationException("A batch policy needs Send.");

    /// <summary>Whether the next batch (of this size) may go while others are out (e.g. a bound on what is unanswered).</summary>
    public Func<long, bool>? Admits { get; init; }
}

/// <summary>
/// Group commit in the Kafka producer's model, for calls that can share one request (counter increments,
/// stream appends): a batch waits <see cref="BatchPolicy{TItem, TResult}.Linger"/> after its first item for
/// more (Kafka's linger.ms); it goes as soon as it is full (batch.size) or a batch opens after it; up to
/// <see cref="BatchPolicy{TItem, TResult}.MaxInFlight"/> batches are out at once, and a ready batch waiting
/// for a slot keeps taking items while it has room; batches leave in the order they opened. A batch that
/// fails faults exactly its own items' tasks. The TypeScript client's batcher is the same design.
/// </summary>
internal sealed class Batcher<TItem, TResult>
{
    private readonly BatchPolicy<TItem, TResult> _policy;
    private readonly object _lock = new();
    private readonly List<Batch> _waiting = new();
    private readonly List<TaskCompletionSource<bool>> _idleWaiters = new();
    private int _inFlight;
    private long _sent;
    private bool _pumping;
    private bool _pumpAgain;

    public Batcher(BatchPolicy<TItem, TResult> policy) => _policy = policy;

    /// <summary>Requests sent so far (each batch is one, whatever its retries).</summary>
    public long Sent => Interlocked.Read(ref _sent);

    /// <summary>Adds an item; the task completes with its result when the batch holding it is answered.</summary>
    public Task<TResult> AddAsync(TItem item)
    {
        var entry = new TaskCompletionSource<TResult>(TaskCreationOptions.RunContinuationsAsynchronously);
        Batch? lingering;
        lock (_lock)
        {
            var kind = _policy.Kind?.Invoke(item) ?? string.Empty;
            var size = _policy.Size(item);
            var last = _waiting.Count == 0 ? null : _waiting[_waiting.Count - 1];
            lingering = null;
            if (last is null || last.Kind != kind || last.Size + size > _policy.MaxSize)
            {
                if (last is not null)
                {
                    last.Ready = true;
                }

                last = new Batch(kind);
                _waiting.Add(last);
                lingering = last;
            }

            last.Items.Add(item);
            last.Entries.Add(entry);
            last.Size += size;
            if (last.Size >= _policy.MaxSize)
            {
                last.Ready = true;
            }
        }

        if (lingering is not null)
        {
            Linger(lingering);
        }

        Pump();
        return entry.Task;
    }

    /// <summary>Makes every waiting batch ready to go without waiting out its linger (Kafka's flush).</summary>
    public void FlushNow()
    {
        lock (_lock)
        {
            foreach (var batch in _waiting)
            {
                batch.Ready = true;
            }
        }

        Pump();
    }

    /// <summary>Completes once nothing is waiting or in flight.</summary>
    public Task WhenIdleAsync()
    {
        lock (_lock)
        {
            if (_inFlight == 0 && _waiting.Count == 0)
            {
                return Task.CompletedTask;
            }

            var idle = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            _idleWaiters.Add(idle);
            return idle.Task;
        }
    }

    /// <summary>Makes the batch ready once its linger is over; with none, once the adding thread has moved on.</summary>
    private void Linger(Batch batch)
    {
        if (_policy.Linger > TimeSpan.Zero)
        {
            _ = LingerAsync(batch);
        }
        else
        {
            // On the thread pool, never on the caller's synchronization context (a UI thread, a test runner's).
            ThreadPool.QueueUserWorkItem(
                static state =>
                {
                    var (self, lingered) = ((Batcher<TItem, TResult>, Batch))state!;
                    self.MarkReady(lingered);
                },
                (this, batch));
        }
    }

    private async Task LingerAsync(Batch batch)
    {
        await Clock.Sleep(_policy.Time, _policy.Linger, CancellationToken.None).ConfigureAwait(false);
        MarkReady(batch);
    }

    private void MarkReady(Batch batch)
    {
        lock (_lock)
        {
            batch.Ready = true;
        }

        Pump();
    }

    /// <summary>
    /// Starts the batches that may go. One thread at a time does it (another one only asks it to look
    /// again), so sends start in the order the batches opened: what a send does before its first await
    /// (a stream producer noting what is out unanswered) happens in that order too.
    /// </summary>
    private void Pump()
    {
        lock (_lock)
        {
            if (_pumping)
            {
                _pumpAgain = true;
                return;
            }

            _pumping = true;
        }

        while (true)
        {
            Batch batch;
            lock (_lock)
            {
                var blocked = _waiting.Count == 0 || !_waiting[0].Ready || _inFlight >= _policy.MaxInFlight
                    || (_inFlight > 0 && _policy.Admits?.Invoke(_waiting[0].Size) == false);
                if (blocked)
                {
                    if (_pumpAgain)
                    {
                        _pumpAgain = false;
                        continue;
                    }

                    _pumping = false;
                    return;
                }

                batch = _waiting[0];
                _waiting.RemoveAt(0);
                _inFlight++;
                Interlocked.Increment(ref _sent);
            }

            _ = RunAsync(batch);
        }
    }

    private async Task RunAsync(Batch batch)
    {
        try
        {
            var results = await _policy.Send(batch.Items).ConfigureAwait(false);
            for (var i = 0; i < batch.Entries.Count; i++)
            {
                batch.Entries[i].TrySetResult(results[i]);
            }
        }
        catch (Exception ex)
        {
            foreach (var entry in batch.Entries)
            {
                entry.TrySetException(ex);
            }
        }
        finally
        {
            lock (_lock)
            {
                _inFlight--;
            }

            Pump();
            NotifyIfIdle();
        }
    }

    private void NotifyIfIdle()
    {
        TaskCompletionSource<bool>[] idle;
        lock (_lock)
        {
            if (_inFlight != 0 || _waiting.Count != 0)
            {
                return;
            }

            idle = _idleWaiters.ToArray();
            _idleWaiters.Clear();
        }

        foreach (var waiter in idle)
        {
            waiter.TrySetResult(true);
        }
    }

    private sealed class Batch
    {
        public Batch(string kind) => Kind = kind;

        public string Kind { get; }

        public List<TItem> Items { get; } = new();

        public List<TaskCompletionSource<TResult>> Entries { get; } = new();

        public long Size { get; set; }

        /// <summary>Lingered, full, or followed by another batch: it goes as soon as it is first and a slot is free.</summary>
        public bool Ready { get; set; }
    }
}
