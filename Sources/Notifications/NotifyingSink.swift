import Foundation
public import PipelineKit
import StageKit

/// Passes a run's events on to `inner`, announcing each failed item to a ``Notifier`` on the way, and telling
/// `onItemChange` when an item starts or finishes (a worker looks whether its batch's queue drained).
public struct NotifyingSink: RunEventSink {
    private let inner: any RunEventSink
    private let notifier: Notifier
    private let workflow: String
    private let onItemChange: (@Sendable () -> Void)?
    /// This process's run: an item that fails in it is announced once, and again only by a later run.
    private let run = UUID().uuidString

    /// A sink for `workflow`'s run in front of `inner` (a worker makes one per submitted workflow).
    public init(
        _ inner: any RunEventSink, notifier: Notifier, workflow: String, onItemChange: (@Sendable () -> Void)? = nil
    ) {
        self.inner = inner
        self.notifier = notifier
        self.workflow = workflow
        self.onItemChange = onItemChange
    }

    public func emit(_ event: any RunEvent) {
        inner.emit(event)
        if event is ItemStarted { onItemChange?() }
        guard let finished = event as? ItemFinished else { return }
        onItemChange?()
        guard finished.outcome == .failed, notifier.wants(.itemFailed) else { return }
        let failure = Notice.FailedItem(
            path: finished.item, error: finished.error?.message ?? "failed",
            errorKind: finished.error?.kind.rawValue ?? "failed")
        notifier.announce(
            .itemFailed(workflow: workflow, item: failure), key: "itemFailed \(workflow) \(run) \(finished.item)")
    }
}
