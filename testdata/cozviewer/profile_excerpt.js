// Excerpt of Coz's profile viewer (plasma-umass/coz, viewer/js/profile.js at
// commit 10630c542bc6d8a24595fd8283bea33bef892016): the constant MIN_DELTA, the
// functions that parse a profile.coz line and turn experiments into speedup
// curves, and the Profile class up to getSpeedupData, verbatim; the drawing
// code (d3) is left out. emuprof's tests run it under Node.js on the
// profile.coz files emuprof writes (cozviewer/check.js).
//
// Copyright (c) 2015, Charlie Curtsinger and Emery Berger, University of
// Massachusetts Amherst. Modified work: Copyright (c) 2016, Charlie
// Curtsinger. All rights reserved.
//
// Redistribution and use in source and binary forms, with or without
// modification, are permitted provided that the following conditions are met:
// 1. Redistributions of source code must retain the above copyright notice,
//    this list of conditions and the following disclaimer.
// 2. Redistributions in binary form must reproduce the above copyright notice,
//    this list of conditions and the following disclaimer in the documentation
//    and/or other materials provided with the distribution.
// THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"
// AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE
// IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE
// ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT OWNER OR CONTRIBUTORS BE
// LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR
// CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF
// SUBSTITUTE GOODS OR SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS
// INTERRUPTION) HOWEVER CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN
// CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE)
// ARISING IN ANY WAY OUT OF THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE
// POSSIBILITY OF SUCH DAMAGE.
const MIN_DELTA = 5;
/**
 * Returns if this data point is valid.
 * Infinity / -Infinity occurs when dividing by 0.
 * NaN happens when the data is messed up and we get a NaN into a computation somewhere.
 */
function isValidDataPoint(data) {
    return !isNaN(data) && data !== Infinity && data !== -Infinity;
}
/**
 * Returns true if this experiment data has enough observations to be reliable.
 */
function hasEnoughData(data) {
    if (data.type === 'throughput') {
        return data.delta >= MIN_DELTA;
    }
    // For latency, require minimum arrivals
    return data.arrivals >= MIN_DELTA;
}
/**
 * Get the applicable data point from this particular experiment.
 * Returns -Infinity or Infinity in undefined cases.
 */
function getDataPoint(data) {
    // Discard obviously incorrect data points.
    if (data.duration < 0) {
        return NaN;
    }
    switch (data.type) {
        case 'throughput':
            return data.duration / data.delta;
        case 'latency':
            const arrivalRate = data.arrivals / data.duration;
            // Average latency, according to Little's Law.
            return data.difference / arrivalRate;
    }
}
/**
 * Are we trying to maximize or minimize this progress point?
 */
function shouldMaximize(data) {
    switch (data.type) {
        case 'latency':
            return false;
        case 'throughput':
            return true;
    }
}
function parseLine(s) {
    if (s[0] == '{') {
        return JSON.parse(s);
    }
    else {
        let parts = s.split('\t');
        let obj = { type: parts[0] };
        for (let i = 0; i < parts.length; i++) {
            const equals_index = parts[i].indexOf('=');
            if (equals_index === -1)
                continue;
            let key = parts[i].substring(0, equals_index);
            let value = parts[i].substring(equals_index + 1);
            switch (key) {
                case 'type':
                    if (obj.type === 'progress-point') {
                        key = 'point-type';
                    }
                    break;
                case 'delta':
                case 'time':
                case 'duration':
                case 'arrivals':
                case 'departures':
                case 'difference':
                    value = parseInt(value, 10);
                    break;
                case 'speedup':
                    value = parseFloat(value);
                    break;
            }
            obj[key] = value;
        }
        return obj;
    }
}
class Profile {
    constructor(profile_text, container, legend, get_min_points, display_warning) {
        this._data = {};
        this._disabled_progress_points = [];
        this._progress_points = null;
        this._plot_container = container;
        this._plot_legend = legend;
        this._get_min_points = get_min_points;
        this._display_warning = display_warning;
        let lines = profile_text.split('\n');
        let experiment = null;
        for (let i = 0; i < lines.length; i++) {
            if (lines[i].length == 0)
                continue;
            let entry = parseLine(lines[i]);
            if (entry.type === 'startup') {
                // Do nothing
            }
            else if (entry.type === 'shutdown') {
                // Do nothing
            }
            else if (entry.type === 'samples') {
                // Do nothing
            }
            else if (entry.type === 'runtime') {
                // Do nothing
            }
            else if (entry.type === 'experiment') {
                // Skip experiments targeting coz.h instrumentation overhead
                if (entry.selected && entry.selected.indexOf('/coz.h:') !== -1) {
                    experiment = null;
                }
                else {
                    experiment = entry;
                }
            }
            else if (entry.type === 'throughput-point' || entry.type === 'throughput_point' || entry.type === 'progress-point') {
                if (experiment !== null) {
                    this.addThroughputMeasurement(experiment, entry);
                }
            }
            else if (entry.type === 'latency-point' || entry.type === 'latency_point') {
                if (experiment !== null) {
                    this.addLatencyMeasurement(experiment, entry);
                }
            }
            else {
                display_warning('Invalid Profile', 'The profile you loaded contains an invalid line: <pre>' + lines[i] + '</pre>');
            }
        }
        if (experiment == null) {
            display_warning('Empty Profile', 'The profile you loaded does not contain result from any performance experiments. Make sure you specified a progress point, built your program with debug information, and ran your program on an input that took at least a few seconds.');
        }
    }
    ensureDataEntry(selected, point, speedup, initial_value) {
        if (!this._data[selected])
            this._data[selected] = {};
        if (!this._data[selected][point])
            this._data[selected][point] = {};
        if (!this._data[selected][point][speedup])
            this._data[selected][point][speedup] = initial_value;
        return this._data[selected][point][speedup];
    }
    addThroughputMeasurement(experiment, point) {
        let entry = this.ensureDataEntry(experiment.selected, point.name, experiment.speedup, {
            delta: 0,
            duration: 0,
            type: 'throughput'
        });
        // Add new delta and duration to data
        entry.delta += point.delta;
        entry.duration += experiment.duration;
    }
    addLatencyMeasurement(experiment, point) {
        let entry = this.ensureDataEntry(experiment.selected, point.name, experiment.speedup, {
            arrivals: 0,
            departures: 0,
            difference: 0,
            duration: 0,
            type: 'latency'
        });
        entry.arrivals += point.arrivals;
        entry.departures += point.departures;
        // Compute a running weighted average of the difference between arrivals and departures
        if (entry.duration === 0) {
            entry.difference = point.difference;
        }
        else {
            // Compute the new total duration of all experiments combined (including the new one)
            let total_duration = entry.duration + experiment.duration;
            // Scale the difference down by the ratio of the prior and total durations. This scale factor will be closer to 1 than 0, so divide first for better numerical stability
            entry.difference *= entry.duration / total_duration;
            // Add the contribution to average difference from the current experiment. The scale factor will be close to zero, so multiply first for better numerical stability.
            entry.difference += (point.difference * experiment.duration) / total_duration;
        }
        // Update the total duration
        entry.duration += experiment.duration;
    }
    getProgressPoints() {
        if (this._progress_points) {
            return this._progress_points;
        }
        let points = [];
        for (var selected in this._data) {
            for (var point in this._data[selected]) {
                if (points.indexOf(point) === -1)
                    points.push(point);
            }
        }
        // Stable order.
        return this._progress_points = points.sort();
    }
    getSpeedupData(min_points) {
        const progress_points = this.getProgressPoints().filter((pp) => this._disabled_progress_points.indexOf(pp) === -1);
        let result = [];
        for (let selected in this._data) {
            let points = [];
            let points_with_enough = 0;
            progress_point_loop: for (let i = 0; i < progress_points.length; i++) {
                // Set up an empty record for this progress point
                const point = {
                    name: progress_points[i],
                    measurements: new Array()
                };
                points.push(point);
                // Get the data for this progress point, if any
                let point_data = this._data[selected][progress_points[i]];
                // Check to be sure the point was observed and we have baseline (zero speedup) data
                if (point_data !== undefined && point_data[0] !== undefined && hasEnoughData(point_data[0])) {
                    // Compute the baseline data point
                    let baseline_data_point = getDataPoint(point_data[0]);
                    let maximize = shouldMaximize(point_data[0]);
                    if (!isValidDataPoint(baseline_data_point)) {
                        // Baseline data point is invalid (divide by zero, or a NaN)
                        continue progress_point_loop;
                    }
                    // Loop over measurements and compute progress speedups in D3-friendly format
                    let measurements = [];
                    for (let speedup in point_data) {
                        // Skip data points with too few observations
                        if (!hasEnoughData(point_data[speedup])) {
                            continue;
                        }
                        let data_point = getDataPoint(point_data[speedup]);
                        // Skip invalid data.
                        if (!isValidDataPoint(data_point)) {
                            continue;
                        }
                        let progress_speedup = (baseline_data_point - data_point) / baseline_data_point;
                        if (!maximize) {
                            // We are trying to *minimize* this progress point, so negate the speedup.
                            progress_speedup = -progress_speedup;
                        }
                        // Skip really large negative and positive values
                        if (progress_speedup >= -1 && progress_speedup <= 2) {
                            // Add entry to measurements
                            measurements.push({
                                speedup: +speedup,
                                progress_speedup: progress_speedup
                            });
                        }
                    }
                    // Sort measurements by speedup
                    measurements.sort(function (a, b) { return a.speedup - b.speedup; });
                    // Use these measurements if we have enough different points
                    if (measurements.length >= min_points) {
                        points_with_enough++;
                        point.measurements = measurements;
                    }
                }
            }
            if (points_with_enough > 0) {
                result.push({
                    name: selected,
                    progress_points: points
                });
            }
        }
        return result;
    }
}
