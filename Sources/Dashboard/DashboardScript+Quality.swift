extension DashboardAssets {
    /// The item view's quality: one line per stage whose outputs carry a quality report (an export's: the metric's
    /// mean, 1 % low, worst frame, worst segment, where the scores come from), above the stages' raw outputs.
    static let qualityScript = """
        function qualityMarkup(stages) {
          const lines = stages.filter((s) => s.outputs && s.outputs.quality && typeof s.outputs.quality.mean === "number")
            .map((s) => {
              const q = s.outputs.quality, digits = q.metric === "ssim" ? 4 : 2, f = (x) => Number(x).toFixed(digits);
              const parts = [`1 % low ${f(q.low1)}`, `worst ${f(q.worst)} at frame ${q.worstFrame}`];
              if (q.worstSegment) parts.push(`worst segment ${q.worstSegment.index + 1} at ${f(q.worstSegment.mean)}`);
              parts.push(`${q.frames} frames`, q.source === "encoder" ? "the encoder's" : (q.source || "measured"));
              return `<li data-key="quality-${text(s.id)}">${text(s.id)}: <strong>${text(String(q.metric).toUpperCase())} ` +
                `${f(q.mean)}</strong> (${text(parts.join(", "))})</li>`;
            }).join("");
          return lines ? `<h3>Quality</h3><ul id="quality">${lines}</ul>` : "";
        }
        """
}
