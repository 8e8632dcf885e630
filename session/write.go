package session

import (
	"fmt"
	"strings"

	"emuprof/analyses/platform"
	"emuprof/guest"
)

// Outputs are the files a run's analyses wrote, and the failures, one line
// each ("writing the trms profile: ...").
type Outputs struct {
	Paths, Failures []string
}

// Fail records that writing what failed with err (errors.Join: one line a
// failure).
func (o *Outputs) Fail(what string, err error) {
	for _, line := range strings.Split(err.Error(), "\n") {
		o.Failures = append(o.Failures, fmt.Sprintf("writing the %s: %s", what, line))
	}
}

// WriteProfiles writes, after the run res, every instance's files into
// out, marked partial when the run did not finish; each is written
// whatever became of the others (a full disk may refuse one file and take
// a smaller one). With a follower (nil: none), the first image's files are
// those written when it exec'd, if it did, and the process list follows.
func WriteProfiles(out string, plugins []platform.Plugin, insts []platform.Instance, fw *Follower, res *guest.Result) *Outputs {
	o := &Outputs{}
	if fw == nil || !fw.RootEnded() {
		for i, inst := range insts {
			if res.Partial {
				inst.MarkPartial(res.Reason)
			}
			ps, err := inst.Write(out)
			o.Paths = append(o.Paths, ps...)
			if err != nil {
				o.Fail(plugins[i].Name+" profile", err)
			}
		}
	}
	if fw != nil {
		fw.SetRootFiles(o.Paths)
		o.Paths = append(o.Paths, fw.Written()...)
		ps, err := fw.Finish(res)
		o.Paths = append(o.Paths, ps...)
		if err != nil {
			o.Fail("process list", err)
		}
	}
	return o
}
