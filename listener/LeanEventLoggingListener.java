// Spark's own event-log writer with one change: a successful task's end is written as the
// fields commitsleuth reads, not the 3 KB Spark writes (every task metric, the peak memory
// metrics, the SQL accumulables). That line is nine in ten bytes of a spool; serialising,
// writing, reading and storing it cost a captured job most of what the capture costs it.
//
// Compiled in the driver's own JVM at attach (listener/lean_writer.py), against the Spark the
// application runs; where the JVM has no compiler, Spark's EventLoggingListener writes alone.
// Every other event, and a task end that is not a plain success, is Spark's JSON as it is.
package commitsleuth;

import java.net.URI;

import org.apache.hadoop.conf.Configuration;
import org.apache.spark.SparkConf;
import org.apache.spark.Success$;
import org.apache.spark.executor.OutputMetrics;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.scheduler.EventLoggingListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.TaskInfo;
import scala.Option;

public class LeanEventLoggingListener extends EventLoggingListener {

    public LeanEventLoggingListener(String appId, Option<String> appAttemptId, URI logBaseDir,
                                    SparkConf sparkConf, Configuration hadoopConf) {
        super(appId, appAttemptId, logBaseDir, sparkConf, hadoopConf);
    }

    @Override
    public void onTaskEnd(SparkListenerTaskEnd event) {
        String line = lean(event);
        if (line == null) {
            super.onTaskEnd(event);
        } else {
            logWriter().writeEvent(line, false);
        }
    }

    // The line JsonProtocol writes for this event, its fields in Spark's order, without the
    // accumulables, the executor metrics and every task metric but the run time and the output
    // metrics; null when the event is not a plain success or a text would need escaping (then
    // Spark writes the whole event).
    public static String lean(SparkListenerTaskEnd e) {
        TaskInfo info = e.taskInfo();
        TaskMetrics metrics = e.taskMetrics();
        if (e.reason() != Success$.MODULE$ || info == null || metrics == null) {
            return null;
        }
        String type = e.taskType();
        String executor = info.executorId();
        String host = info.host();
        String locality = info.taskLocality().toString();
        if (!plain(type) || !plain(executor) || !plain(host) || !plain(locality)) {
            return null;
        }
        OutputMetrics output = metrics.outputMetrics();
        StringBuilder b = new StringBuilder(640);
        b.append("{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":").append(e.stageId())
            .append(",\"Stage Attempt ID\":").append(e.stageAttemptId())
            .append(",\"Task Type\":\"").append(type)
            .append("\",\"Task End Reason\":{\"Reason\":\"Success\"},\"Task Info\":{\"Task ID\":").append(info.taskId())
            .append(",\"Index\":").append(info.index())
            .append(",\"Attempt\":").append(info.attemptNumber())
            .append(",\"Partition ID\":").append(info.partitionId())
            .append(",\"Launch Time\":").append(info.launchTime())
            .append(",\"Executor ID\":\"").append(executor)
            .append("\",\"Host\":\"").append(host)
            .append("\",\"Locality\":\"").append(locality)
            .append("\",\"Speculative\":").append(info.speculative())
            .append(",\"Getting Result Time\":").append(info.gettingResultTime())
            .append(",\"Finish Time\":").append(info.finishTime())
            .append(",\"Failed\":").append(info.failed())
            .append(",\"Killed\":").append(info.killed())
            .append("},\"Task Metrics\":{\"Executor Run Time\":").append(metrics.executorRunTime())
            .append(",\"Output Metrics\":{\"Bytes Written\":").append(output.bytesWritten())
            .append(",\"Records Written\":").append(output.recordsWritten())
            .append("}}}");
        return b.toString();
    }

    // Printable ASCII without '"' and '\': JSON writes it as it is.
    private static boolean plain(String s) {
        if (s == null) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') {
                return false;
            }
        }
        return true;
    }
}
