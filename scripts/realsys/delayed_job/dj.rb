# A tiny Active Record app around Debian's Delayed::Job (ruby-delayed-job 4.1.9, ruby-delayed-job-active-record
# 4.1.6, ruby-rails 6.1): no Rails app, only Active Record, Delayed::Job's own migration template and its own worker.
#
#   ruby dj.rb migrate              delayed_jobs from the gem's own generator template (rendered with ERB), a ledger
#   ruby dj.rb enqueue KEY... [opts] Delayed::Job.enqueue(LedgerJob) each: --priority N --sleep S --max-attempts N --fail-flag F
#   ruby dj.rb work NAME            a Delayed::Worker#start until killed (as `rake jobs:work`)
#   ruby dj.rb drain                a Delayed::Worker with exit_on_complete: runs every ready job, then exits
#   ruby dj.rb counts               Delayed::Job's own queries: ready_to_run, failed, locked, total
#
# DATABASE_URL names the database (postgres://... or mysql2://...). Each run of a job writes a ledger row: started when
# perform begins, finished when it returns. A job whose key starts with "slow" sleeps QCTL_SLOW_SECONDS while the file
# QCTL_SLOW_FLAG exists; a job with a fail flag raises while that file exists.
require 'erb'
require 'optparse'
require 'active_record'
require 'delayed_job'
require 'delayed_job_active_record'

url = ENV.fetch('DATABASE_URL')
ActiveRecord::Base.establish_connection(url)
if ActiveRecord.respond_to?(:default_timezone=)
  ActiveRecord.default_timezone = :utc
else
  ActiveRecord::Base.default_timezone = :utc
end
Delayed::Worker.backend = :active_record
Delayed::Worker.sleep_delay = 0.2
Delayed::Worker.destroy_failed_jobs = false
Delayed::Worker.logger = Logger.new($stderr)
Delayed::Worker.logger.level = Logger::INFO

def ledger_start(key)
  c = ActiveRecord::Base.connection
  c.execute("INSERT INTO ledger (job_key, pid, started_at) VALUES (#{c.quote(key)}, #{Process.pid}, #{c.quote(Time.now.to_f)})")
  c.select_value("SELECT max(id) FROM ledger WHERE job_key = #{c.quote(key)} AND pid = #{Process.pid}")
end

def ledger_finish(id)
  c = ActiveRecord::Base.connection
  c.execute("UPDATE ledger SET finished_at = #{c.quote(Time.now.to_f)} WHERE id = #{id.to_i}")
end

LedgerJob = Struct.new(:key, :sleep_s, :attempts_allowed, :fail_flag) do
  def perform
    id = ledger_start(key)
    flag = ENV['QCTL_SLOW_FLAG']
    slow = key.start_with?('slow') && flag && File.exist?(flag)
    sleep(slow ? ENV.fetch('QCTL_SLOW_SECONDS', '300').to_f : sleep_s.to_f)
    raise "#{key}: failing on purpose (#{fail_flag} exists)" if fail_flag && File.exist?(fail_flag)
    ledger_finish(id)
  end

  # Worker#max_attempts reads the payload's max_attempts when it has one.
  def max_attempts
    attempts_allowed
  end
end

case ARGV.shift
when 'migrate'
  template = File.join(Gem.loaded_specs['delayed_job_active_record'].full_gem_path,
                       'lib/generators/delayed_job/templates/migration.rb')
  migration_version = "[#{ActiveRecord::VERSION::MAJOR}.#{ActiveRecord::VERSION::MINOR}]"
  eval(ERB.new(File.read(template)).result(binding)) # rubocop:disable Security/Eval
  ActiveRecord::Migration.verbose = false
  CreateDelayedJobs.up
  ActiveRecord::Base.connection.create_table(:ledger) do |t|
    t.string :job_key, null: false
    t.integer :pid
    t.float :started_at
    t.float :finished_at
  end
  puts "migrated: #{template}"
when 'enqueue'
  opts = { priority: 0, sleep: 0.2, max_attempts: nil, fail_flag: nil }
  OptionParser.new do |o|
    o.on('--priority N', Integer) { |v| opts[:priority] = v }
    o.on('--sleep S', Float) { |v| opts[:sleep] = v }
    o.on('--max-attempts N', Integer) { |v| opts[:max_attempts] = v }
    o.on('--fail-flag F') { |v| opts[:fail_flag] = v }
  end.parse!(ARGV)
  ARGV.each do |key|
    job = Delayed::Job.enqueue(LedgerJob.new(key, opts[:sleep], opts[:max_attempts], opts[:fail_flag]),
                               priority: opts[:priority])
    puts job.id
  end
when 'work'
  name = ARGV.shift
  worker = Delayed::Worker.new
  worker.name_prefix = "#{name} " if name
  worker.start
when 'drain'
  Delayed::Worker.new(exit_on_complete: true).start
when 'counts'
  # Delayed::Job's own scopes and predicates (Backend::ActiveRecord::Job.ready_to_run, Backend::Base#failed?).
  j = Delayed::Job
  ready = j.ready_to_run('host:nobody pid:0', Delayed::Worker.max_run_time).count
  puts "total=#{j.count} ready_to_run=#{ready} failed=#{j.where.not(failed_at: nil).count} " \
       "locked=#{j.where(failed_at: nil).where.not(locked_at: nil).count}"
else
  warn 'usage: ruby dj.rb migrate|enqueue KEY|work NAME|drain|counts'
  exit 2
end
