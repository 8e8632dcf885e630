package main

// emuprof run --speedup FILE:LINE=PCT --progress POINT: a run's virtual
// duration with actual speedups, and its progress points' rates.

import (
	"fmt"
	"math"
	"os"

	"github.com/spf13/cobra"

	"emuprof/analyses/causal"
	"emuprof/analyses/platform"
	"emuprof/guest"
	"emuprof/session"
	"emuprof/trace"
)

// progressFlags are run's --progress points (causal's point syntax).
type progressFlags struct{ progress, latency []string }

func (p *progressFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&p.progress, "progress", nil, "with --speedup: count a progress point, SYMBOL (each call), FILE:LINE (each entry) or 0xADDR (each execution), and report its rate; repeatable")
	cmd.Flags().StringArrayVar(&p.latency, "latency", nil, "with --speedup: count latency progress points BEGIN,END; repeatable")
}

// runObserved is `emuprof run` with --speedup or --progress: it reports
// the virtual duration and the progress points' visits and periods.
func runObserved(cfg guest.Config, f *runFlags, p *progressFlags) error {
	var pipeline func(*trace.BlockTable) *platform.Pipeline
	var needs trace.Needs
	var observed func() []causal.PointObservation
	if len(p.progress)+len(p.latency) > 0 {
		var fac platform.Factory
		fac, observed = causal.Observer(causal.Config{Progress: p.progress, Latency: p.latency})
		var err error
		if pipeline, needs, err = session.Observe(&cfg, fac); err != nil {
			return &exitError{Code: 2, Msg: err.Error()}
		}
	}
	res, err := session.Run(cfg, &f.Options, pipeline, needs)
	if res == nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "emuprof: virtual duration %d ns\n", res.Makespan)
	if observed != nil {
		for _, o := range observed() {
			fmt.Fprintf(os.Stderr, "emuprof: progress point %s: %d visits", o.Name, o.Arrivals)
			if o.Latency {
				fmt.Fprintf(os.Stderr, ", %d departures", o.Departures)
			}
			if per := o.PeriodNs(); !math.IsNaN(per) {
				fmt.Fprintf(os.Stderr, ", one every %.1f ns from the first (%d ns) to the last (%d ns), %.1f per virtual second", per, o.FirstNs, o.LastNs, 1e9/per)
			}
			if lat := o.MeanLatencyNs(); !math.IsNaN(lat) {
				fmt.Fprintf(os.Stderr, ", mean latency %.1f ns", lat)
			}
			fmt.Fprintln(os.Stderr)
		}
	}
	return err
}
