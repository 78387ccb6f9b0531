# Runs against a real server: CRM_BASE_URL, CRM_API_KEY, CRM_READONLY_KEY, CRM_LIMITED_BASE_URL, CRM_LIMITED_KEY.
require 'minitest/autorun'
require 'socket'
require_relative '../lib/crm_client'

class ClientTest < Minitest::Test
  def setup
    @crm = CrmClient::Client.new
  end

  def test_create_get_list
    ada = @crm.customers.create({ name: 'Ada Ruby', email: 'ada.rb@example.com' })
    assert_equal ada, @crm.customers.get(ada['id'])
    job = @crm.jobs.create({ customer_id: ada['id'], title: 'Boiler' })
    invoice = @crm.invoices.create({ customer_id: ada['id'], job_id: job['id'], currency: 'GBP',
                                     line_items: [{ description: 'Work', quantity: 4, unit_amount: 25 }] })
    assert_equal 100, invoice['total_amount']
    page = @crm.customers.list(search: 'ada ruby', limit: 5)
    assert_equal({ 'page' => 1, 'limit' => 5, 'total' => 1 }, page['pagination'].slice('page', 'limit', 'total'))
    assert_includes @crm.invoices.list(status: 'draft')['data'].map { |i| i['number'] }, invoice['number']
    [@crm.emails, @crm.estimates, @crm.proposals].each { |resource| assert resource.list.key?('pagination') }
  end

  def test_each_page
    5.times { |i| @crm.customers.create({ name: "RbPaged #{i}" }) }
    names = @crm.customers.each(search: 'rbpaged', limit: 2).map { |c| c['name'] }
    assert_equal (0..4).map { |i| "RbPaged #{i}" }, names.sort
  end

  def test_errors
    bad = assert_raises(CrmClient::BadRequest) { @crm.customers.create({ name: '' }) }
    assert_equal [{ 'param' => 'name', 'message' => 'must not be blank' }], bad.errors
    assert_equal 'BAD_REQUEST', bad.code
    refute_nil bad.request_id
    assert_raises(CrmClient::Unauthorized) { CrmClient::Client.new(api_key: 'svc_live_nope').customers.list }
    assert_raises(CrmClient::Forbidden) { CrmClient::Client.new(api_key: ENV['CRM_READONLY_KEY']).invoices.list }
    assert_raises(CrmClient::NotFound) { @crm.customers.get('00000000-0000-4000-8000-000000000000') }
    failing = CrmClient::Client.new(api_key: 'k', max_retries: 0)
    fake = Struct.new(:code, :body) { def [](_name) = nil }
    failing.define_singleton_method(:send_request) { |_uri, _request| fake.new('500', '{"code":"INTERNAL","detail":"x","request_id":"r1"}') }
    error = assert_raises(CrmClient::ServerError) { failing.customers.list }
    assert_equal [500, 'r1'], [error.status, error.request_id]
    assert CrmClient::RateLimited < CrmClient::Error
  end

  def test_retry_after_429
    base, key = ENV['CRM_LIMITED_BASE_URL'], ENV['CRM_LIMITED_KEY']
    impatient = CrmClient::Client.new(api_key: key, base_url: base, max_retries: 0)
    assert_raises(CrmClient::RateLimited) { 5.times { impatient.customers.list } }
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    CrmClient::Client.new(api_key: key, base_url: base, max_retries: 3).customers.list
    assert_operator Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, :>, 0.5
  end

  def test_retries_a_409_in_flight
    # The in-flight proxy answers a create's first try with 409 and Retry-After, as a server
    # does while a request with the same Idempotency-Key runs. The client waits and retries.
    crm = CrmClient::Client.new(base_url: ENV['CRM_IN_FLIGHT_BASE_URL'])
    assert_equal 'Rb in flight', crm.customers.create({ name: 'Rb in flight' })['name']
    assert CrmClient::Conflict < CrmClient::Error
  end

  def test_retried_create_is_created_once
    client = CrmClient::Client.new
    dropped = false
    client.define_singleton_method(:send_request) do |uri, request|
      answer = super(uri, request)
      if request.method == 'POST' && !dropped
        dropped = true # the server created it; the answer is lost
        raise Errno::ECONNRESET
      end
      answer
    end
    created = client.customers.create({ name: 'Ruby exactly once' })
    assert dropped
    found = @crm.customers.list(search: 'ruby exactly once')['data']
    assert_equal [created['id']], found.map { |c| c['id'] }
  end

  def test_update
    customer = @crm.customers.create({ name: 'Rb Patch', email: 'patch.rb@example.com', phone: '+14155550102' })
    assert_equal [1, nil], customer.values_at('version', 'deleted_at')
    updated = @crm.customers.update(customer['id'], { name: 'Rb Patched', phone: nil })
    assert_equal ['Rb Patched', 'patch.rb@example.com', nil, 2], updated.values_at('name', 'email', 'phone', 'version')
    assert_equal updated, @crm.customers.get(customer['id'])
    assert_equal 3, @crm.customers.update(customer['id'], { email: 'patched.rb@example.com' }, if_match: 2)['version']
    assert_raises(NoMethodError) { @crm.emails.update(customer['id'], { subject: 'x' }) }
  end

  def test_conditional_update_of_a_stale_record
    read = @crm.customers.create({ name: 'Rb Stale' })
    fresh = @crm.customers.update_if_unchanged(read, { name: 'Rb Fresh' })
    assert_equal ['Rb Fresh', read['version'] + 1], fresh.values_at('name', 'version')
    stale = assert_raises(CrmClient::PreconditionFailed) { @crm.customers.update_if_unchanged(read, { name: 'Rb Lost update' }) }
    assert_equal [412, 'PRECONDITION_FAILED'], [stale.status, stale.code]
    assert_kind_of CrmClient::Error, stale
    assert_equal [read['id'], 'Rb Fresh', fresh['version']], stale.current.values_at('id', 'name', 'version')
    assert_equal 'Rb Fresh', @crm.customers.get(read['id'])['name']
    assert_raises(CrmClient::PreconditionFailed) { @crm.customers.delete(read['id'], if_match: read['version']) }
  end

  def test_delete_and_restore
    customer = @crm.customers.create({ name: 'Rb Deleted' })
    assert_nil @crm.customers.delete(customer['id'])
    assert_raises(CrmClient::NotFound) { @crm.customers.get(customer['id']) }
    restored = @crm.customers.restore(customer['id'])
    assert_equal [customer['id'], 'Rb Deleted', nil], restored.values_at('id', 'name', 'deleted_at')
    assert_operator restored['version'], :>, customer['version']
    assert_equal restored, @crm.customers.get(customer['id'])
    email = @crm.emails.create({ customer_id: customer['id'], type: 'outgoing', from: 'us@example.com', to: 'them@example.com', subject: 'Hello' })
    @crm.emails.delete(email['id'])
    assert_raises(CrmClient::NotFound) { @crm.emails.get(email['id']) }
  end

  def test_transitions
    customer = @crm.customers.create({ name: 'Rb Transitions' })
    invoice = @crm.invoices.create({ customer_id: customer['id'], currency: 'USD', line_items: [{ description: 'Work', quantity: 1, unit_amount: 900 }] })
    sent = @crm.invoices.transition(invoice['id'], 'send', if_match: invoice['version'])
    assert_equal ['sent', invoice['version'] + 1], sent.values_at('status', 'version')
    assert_raises(CrmClient::Conflict) { @crm.invoices.update(invoice['id'], { currency: 'EUR' }) }
    assert_raises(CrmClient::PreconditionFailed) { @crm.invoices.transition(invoice['id'], :pay, if_match: invoice['version']) }
    assert_equal 'paid', @crm.invoices.transition(invoice['id'], :pay)['status']
    job = @crm.jobs.create({ customer_id: customer['id'], title: 'Boiler' })
    assert_equal 'in_progress', @crm.jobs.transition(job['id'], 'start')['status']
    assert_equal 'cancelled', @crm.jobs.transition(job['id'], 'cancel')['status']
    proposal = @crm.proposals.create({ customer_id: customer['id'], title: 'Plan', currency: 'USD', total_amount: 100 })
    @crm.proposals.transition(proposal['id'], 'send')
    assert_equal 'accepted', @crm.proposals.transition(proposal['id'], 'accept')['status']
    assert_raises(ArgumentError) { @crm.invoices.transition(invoice['id'], 'start') }
  end

  def test_retried_update_is_applied_once
    customer = @crm.customers.create({ name: 'Rb Once' })
    client = CrmClient::Client.new
    keys = []
    client.define_singleton_method(:send_request) do |uri, request|
      answer = super(uri, request)
      if request.method == 'PATCH'
        keys << request['Idempotency-Key']
        raise Errno::ECONNRESET if keys.size == 1 # the server applied it; the answer is lost
      end
      answer
    end
    updated = client.customers.update(customer['id'], { name: 'Rb Once more' })
    assert_equal 2, keys.size
    assert_equal keys[0], keys[1]
    assert_equal customer['version'] + 1, updated['version']
    assert_equal customer['version'] + 1, @crm.customers.get(customer['id'])['version']
  end

  def test_sync_then_resume_from_the_cursor
    kept = @crm.customers.create({ name: 'Rb Sync kept' })
    gone = @crm.customers.create({ name: 'Rb Sync gone' })
    @crm.customers.create({ name: 'Rb Sync third' }) # more than a page of 2, even when this test runs first (minitest's order is random)
    first = @crm.customers.sync(limit: 2)
    seen = first.to_a
    assert_operator seen.size, :>, 2 # more than one page was followed
    assert_empty [kept['id'], gone['id']] - seen.map { |r| r['id'] }
    assert_kind_of String, first.cursor
    saved = first.cursor

    @crm.customers.update(kept['id'], { name: 'Rb Sync changed' })
    @crm.customers.delete(gone['id'])
    resumed = @crm.customers.sync(cursor: saved, limit: 1)
    changes = resumed.to_h { |r| [r['id'], r] }
    assert_equal [kept['id'], gone['id']].sort, changes.keys.sort
    assert_equal ['Rb Sync changed', kept['version'] + 1], changes[kept['id']].values_at('name', 'version')
    tombstone = changes[gone['id']]
    assert_equal true, tombstone['deleted']
    refute_nil tombstone['deleted_at']
    assert_operator tombstone['version'], :>, gone['version']
    refute_equal saved, resumed.cursor
    assert_empty @crm.customers.sync(cursor: resumed.cursor).to_a
    assert_empty resumed.to_a # iterating again: nothing changed since
  end

  def test_sorts_filters_expands_and_shapes_lists_and_items
    acme = @crm.customers.create({ name: 'Rb Sorted Acme', email: 'sorted@rb.example' })
    other = @crm.customers.create({ name: 'Rb Sorted Other' })
    job = @crm.jobs.create({ customer_id: acme['id'], title: 'Rb sorted job', scheduled_at: '2026-12-01T09:00:00Z' })
    invoice = lambda do |customer, due, amount, moves|
      created = @crm.invoices.create({ customer_id: customer['id'], currency: 'EUR', due_date: due,
                                       line_items: [{ description: 'x', quantity: 1, unit_amount: amount }] })
      moves.each { |move| @crm.invoices.transition(created['id'], move) }
      created['id']
    end
    later = invoice.call(acme, '2026-11-01', 500, %w[send])
    first = invoice.call(acme, '2026-10-01', 100, %w[send])
    dearer = invoice.call(acme, '2026-11-01', 900, %w[send])
    paid = invoice.call(acme, '2026-10-15', 300, %w[send pay])
    invoice.call(acme, '2026-12-15', 700, %w[send]) # not yet due
    invoice.call(other, '2026-10-01', 100, %w[send]) # another customer's

    overdue = @crm.invoices.list(order_by: %w[due_date -total_amount],
                                 where: { status: %w[sent], due_date: { lt: Date.new(2026, 12, 1) }, customer: { search: 'rb sorted acme' } },
                                 expand: %w[customer], fields: %w[number due_date])
    assert_equal [first, dearer, later], overdue['data'].map { |i| i['id'] }
    assert_equal 3, overdue['pagination']['total']
    assert_equal %w[customer due_date id number], overdue['data'].first.keys.sort
    assert_equal 'sorted@rb.example', overdue['data'].first['customer']['email']
    # Filters as keyword arguments; one value for a set, a bare value for an exact match.
    assert_equal [paid], @crm.invoices.list(status: 'paid', total_amount: 300, customer_id: acme['id'])['data'].map { |i| i['id'] }
    window = { gte: Time.utc(2026, 12, 1), lt: Time.utc(2026, 12, 2) }
    assert_equal [job['id']], @crm.jobs.list(where: { scheduled_at: window, customer_id: acme['id'] })['data'].map { |j| j['id'] }
    # A related list's range, one level deep: customers with a sent invoice due before November.
    owing = @crm.customers.list(where: { invoices: { status: 'sent', due_date: { lt: '2026-11-01' } }, search: 'rb sorted' }, order_by: '-name')
    assert_equal [other['id'], acme['id']], owing['data'].map { |c| c['id'] }
    names = @crm.customers.each(search: 'rb sorted', order_by: 'name', fields: %w[name], limit: 1).to_a
    assert_equal [{ 'id' => acme['id'], 'name' => 'Rb Sorted Acme' }, { 'id' => other['id'], 'name' => 'Rb Sorted Other' }], names
    one = @crm.invoices.get(first, expand: %w[customer], fields: %w[number])
    assert_equal %w[customer id number], one.keys.sort
    assert_equal acme['id'], one['customer']['id']
    bad = assert_raises(CrmClient::BadRequest) { @crm.invoices.list(where: { due_date: { lt: 'soon' } }, order_by: 'colour') }
    assert_equal %w[due_date[lt] order_by], bad.errors.map { |e| e['param'] }.sort
  end

  def test_covers_every_route_of_the_openapi_document
    document = JSON.parse(Net::HTTP.get(URI("#{ENV['CRM_BASE_URL']}/openapi.json")))
    missing = '00000000-0000-4000-8000-000000000000'
    # A method of the client's own (every object responds to send).
    own = ->(resource, name) { resource.respond_to?(name) && resource.method(name).owner.name.to_s.start_with?('CrmClient') }
    document['paths'].each do |path, methods|
      _, name, id, action = path.split('/')
      resource = @crm.public_send(name)
      methods.each_key do |method|
        operation = if id == 'by_external_id'
                      :upsert
                    elsif id && !action && !id.start_with?('{')
                      id.to_sym # customers.batch, customers.duplicates
                    elsif action && (own.call(resource, action) || !resource.respond_to?(:transition))
                      action.to_sym # restore, a record's events, customers.merge; events.resend, webhook_endpoints.rotate_secret and .deliveries
                    else
                      case method
                      when 'get' then id ? :get : :list
                      when 'post' then id.nil? ? :create : :transition
                      else { 'patch' => :update, 'delete' => :delete }.fetch(method)
                      end
                    end
        assert resource.respond_to?(operation), "#{method} #{path}"
        assert resource.instance_variable_get(:@editable), "#{method} #{path}" if operation == :update && resource.is_a?(CrmClient::Resource)
        assert_includes resource.instance_variable_get(:@moves), action, "#{method} #{path}" if operation == :transition
        # The method calls this route (not a missing one): what it answers there.
        case operation
        when :upsert
          refused = assert_raises(CrmClient::BadRequest, "#{method} #{path}") { resource.upsert('rb-route', {}, dry_run: true) } # every create requires a field
          refute_empty refused.errors, "#{method} #{path}"
        when :batch
          results = resource.batch([{ op: 'delete', id: missing }], mode: 'partial', dry_run: true)['results']
          assert_equal [[0, 404]], results.map { |r| [r['index'], r['status']] }
        when :duplicates
          assert_equal 1, resource.duplicates['pagination']['page']
        when :merge
          source = @crm.customers.create({ name: 'Rb merge source' })
          assert_raises(CrmClient::NotFound, "#{method} #{path}") { resource.merge(missing, [source['id']]) }
        else
          next unless action && !%i[restore transition].include?(operation)

          # An unknown record is NotFound.
          assert_raises(CrmClient::NotFound, "#{method} #{path}") { resource.public_send(operation, name == 'events' ? "evt_#{'0' * 32}" : missing) }
        end
      end
    end
  end

  def test_upserts_batches_integration_keys_and_dry_runs
    created = @crm.customers.upsert('rb-crm-1', { name: 'Rb Upserted', metadata: { tier: 'gold', region: 'eu' } })
    assert_equal ['rb-crm-1', { 'tier' => 'gold', 'region' => 'eu' }, 1], created.values_at('external_id', 'metadata', 'version')
    updated = @crm.customers.upsert('rb-crm-1', { name: 'Rb Upserted again', metadata: { tier: 'silver' } })
    assert_equal [created['id'], { 'tier' => 'silver', 'region' => 'eu' }, 2], updated.values_at('id', 'metadata', 'version')
    # An update merges metadata key by key; nil removes one.
    assert_equal({ 'tier' => 'silver' }, @crm.customers.update(created['id'], { metadata: { region: nil } })['metadata'])
    assert_equal [created['id']], @crm.customers.list(external_id: 'rb-crm-1')['data'].map { |c| c['id'] }
    assert_equal [created['id']], @crm.customers.list(where: { metadata: { tier: 'silver' } })['data'].map { |c| c['id'] }
    spaced = @crm.customers.upsert('rb hub/7', { name: 'Rb Spaced' })
    assert_equal 'rb hub/7', spaced['external_id']

    results = @crm.customers.batch([
                                     { op: 'create', external_id: 'rb-batch-1', data: { name: 'Rb Batch 1' } },
                                     { op: 'upsert', external_id: 'rb-crm-1', data: { name: 'Rb Upserted by batch' } },
                                     { op: 'update', external_id: 'rb-batch-1', data: { phone: '+14155550197' } },
                                     { op: 'delete', id: created['id'], if_match: 4 }
                                   ])['results']
    assert_equal [[0, 201], [1, 200], [2, 200], [3, 204]], results.map { |r| [r['index'], r['status']] }
    assert_equal '+14155550197', results[2]['record']['phone']
    assert_raises(CrmClient::NotFound) { @crm.customers.get(created['id']) }
    # Atomic: a refusal raises, naming the item's field, and nothing is written.
    refused = assert_raises(CrmClient::BadRequest) do
      @crm.customers.batch([{ op: 'create', data: { name: 'Rb never' } }, { op: 'create', data: { name: 'Rb bad', email: 'nope' } }])
    end
    assert_equal ['items[1].email'], refused.errors.map { |e| e['param'] }
    assert_equal 0, @crm.customers.list(search: 'rb never')['pagination']['total']
    # Partial: each refused item in its result.
    partial = @crm.customers.batch([{ op: 'create', data: { name: 'Rb partial' } }, { op: 'update', external_id: 'rb-nobody', data: { name: 'x' } }], mode: 'partial')['results']
    assert_equal [201, 404], partial.map { |r| r['status'] }
    assert_equal %w[NOT_FOUND external_id], [partial[1]['error']['code'], partial[1]['error']['errors'][0]['param']]

    # Dry runs answer what the write would, and keep nothing.
    tried = @crm.customers.create({ name: 'Rb dry run' }, dry_run: true)
    assert_equal ['Rb dry run', 1], tried.values_at('name', 'version')
    assert_raises(CrmClient::NotFound) { @crm.customers.get(tried['id']) }
    assert_equal 201, @crm.customers.batch([{ op: 'upsert', external_id: 'rb-dry', data: { name: 'Rb dry batch' } }], dry_run: true)['results'][0]['status']
    assert_equal 0, @crm.customers.list(external_id: 'rb-dry')['pagination']['total']
    kept = @crm.customers.list(external_id: 'rb-batch-1')['data'][0]
    assert_raises(CrmClient::PreconditionFailed) { @crm.customers.update(kept['id'], { name: 'Rb stale' }, if_match: 1, dry_run: true) }
    assert_equal kept['version'] + 1, @crm.customers.update(kept['id'], { name: 'Rb renamed' }, dry_run: true)['version']
    @crm.customers.delete(kept['id'], dry_run: true)
    assert_equal kept, @crm.customers.get(kept['id'])
  end

  def test_duplicates_and_merge
    kept = @crm.customers.create({ name: 'Rb Kept', email: 'rb.twin@example.com' })
    twin = @crm.customers.create({ name: 'Rb Twin', email: 'Rb.Twin@example.com' })
    job = @crm.jobs.create({ customer_id: twin['id'], title: 'Rb twin job' })
    group = @crm.customers.duplicates(limit: 100)['data'].find { |g| g['key'] == 'email' && g['value'] == 'rb.twin@example.com' }
    assert_equal [2, [kept['id'], twin['id']]], [group['count'], group['customers'].map { |c| c['id'] }]
    assert_equal kept, @crm.customers.merge(kept['id'], [twin['id']], dry_run: true)
    assert_equal twin['id'], @crm.jobs.get(job['id'])['customer_id']
    assert_equal kept, @crm.customers.merge(kept['id'], [twin['id']], if_match: kept['version'])
    assert_equal kept['id'], @crm.jobs.get(job['id'])['customer_id']
    assert_raises(CrmClient::NotFound) { @crm.customers.get(twin['id']) }
    refute(@crm.customers.duplicates(limit: 100)['data'].any? { |g| g['value'] == 'rb.twin@example.com' })
    refused = assert_raises(CrmClient::BadRequest) { @crm.customers.merge(kept['id'], [kept['id']]) }
    assert_equal ['source_ids[0]'], refused.errors.map { |e| e['param'] }
  end

  def test_imports_and_request_logs
    started = @crm.imports.create("name,external_id,metadata.team\nRb Imported,rb-import-1,blue\n", resource: 'customers', mode: 'upsert')
    assert_includes %w[pending running completed], started['status']
    # It runs in the background: wait for it to end (no import left running behind this test).
    progress = @crm.imports.get(started['id'])
    deadline = Time.now + 20
    until %w[completed failed].include?(progress['status']) || Time.now > deadline
      sleep 0.1
      progress = @crm.imports.get(started['id'])
    end
    assert_equal [started['id'], 'completed', 'upsert', 1, 1], progress.values_at('id', 'status', 'mode', 'total', 'created')
    assert_equal([{ 'team' => 'blue' }], @crm.customers.list(external_id: 'rb-import-1')['data'].map { |c| c['metadata'] })
    refused = assert_raises(CrmClient::BadRequest) { @crm.imports.create("nickname\nx\n", resource: 'customers') }
    logged = @crm.request_logs.list(request_id: refused.request_id)['data']
    assert_equal [['POST', 400, 'BAD_REQUEST']], logged.map { |r| r.values_at('method', 'status', 'error_code') }
    assert(@crm.request_logs.each(status: '4xx', limit: 5).all? { |r| r['status'] >= 400 })
    refute_respond_to @crm.request_logs, :get
  end

  def test_events_list_get_each_and_catch_up
    customer = @crm.customers.create({ name: 'Rb Evented' })
    @crm.customers.update(customer['id'], { name: 'Rb Evented twice' })
    updated, created = @crm.events.list(limit: 2)['data']
    assert_equal %w[customer.updated customer.created], [updated['type'], created['type']]
    assert_match(/\Aevt_[0-9a-f]{32}\z/, updated['id'])
    assert_equal 'Rb Evented twice', updated['data']['object']['name']
    assert_equal({ 'name' => 'Rb Evented' }, updated['data']['previous_attributes'])
    assert_equal created, @crm.events.get(created['id'])
    assert_raises(CrmClient::NotFound) { @crm.events.get("evt_#{'0' * 32}") }
    types = @crm.events.each(type: 'customer.created', limit: 2).map { |e| e['type'] }
    assert_equal @crm.events.list(type: 'customer.created')['pagination']['total'], types.size
    assert_equal ['customer.created'], types.uniq

    since = @crm.events.since(created['id'], limit: 1)
    assert_equal [updated['id']], since.map { |e| e['id'] }
    assert_kind_of String, since.cursor
    later = @crm.customers.create({ name: 'Rb Evented later' })
    last = @crm.customers.create({ name: 'Rb Evented last' })
    resumed = @crm.events.since(cursor: since.cursor, limit: 1)
    assert_equal [['customer.created', later['id']], ['customer.created', last['id']]], resumed.map { |e| [e['type'], e['data']['object']['id']] }
    assert_empty resumed.to_a # iterating again: nothing since
    assert_equal [updated['id']], @crm.events.since(created['id'], type: 'customer.updated').map { |e| e['id'] }
    assert_raises(ArgumentError) { @crm.events.since }
    assert_raises(CrmClient::BadRequest) { @crm.events.list(after: "evt_#{'0' * 32}") }
  end

  # A webhook receiver on a TCPServer: records each request's headers (names lower-cased) and exact body.
  def start_receiver
    server = TCPServer.new('127.0.0.1', 0)
    received = Queue.new
    thread = Thread.new do
      loop do
        socket = server.accept
        headers = {}
        socket.gets # the request line
        while (line = socket.gets) && line != "\r\n"
          name, value = line.split(':', 2)
          headers[name.downcase] = value.strip
        end
        body = socket.read(headers['content-length'].to_i)
        socket.write("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
        socket.close
        received << [headers, body]
      end
    rescue IOError, SystemCallError
      nil # closed
    end
    [server, thread, received]
  end

  def test_real_webhook_deliveries_verify_with_the_endpoint_secret
    server, thread, queue = start_receiver
    received = []
    deliveries_of = lambda do |record_id, count = 1|
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 20
      loop do
        found = received.select { |_h, body| JSON.parse(body)['data']['object']['id'] == record_id }
        return found if found.size >= count

        flunk "no delivery for #{record_id}" if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
        queue.empty? ? sleep(0.05) : received << queue.pop
      end
    end
    hooks = @crm.webhook_endpoints
    endpoint = hooks.create({ url: "http://127.0.0.1:#{server.addr[1]}/hook", description: 'Ruby receiver', event_types: ['customer.created'] })
    begin
      assert_match(/\Awhsec_/, endpoint['secret'])
      assert_equal [['customer.created'], true], endpoint.values_at('event_types', 'enabled')
      refute hooks.get(endpoint['id']).key?('secret')
      assert_includes hooks.list['data'].map { |e| e['id'] }, endpoint['id']
      assert_includes hooks.each.map { |e| e['id'] }, endpoint['id']

      customer = @crm.customers.create({ name: 'Rb Hooked' })
      headers, body = deliveries_of.call(customer['id']).first
      event = CrmClient.verify_webhook(body, headers, endpoint['secret'])
      assert_equal ['customer.created', customer], [event['type'], event['data']['object']]
      assert_equal event['id'], headers['webhook-id']
      assert_equal event, @crm.events.get(event['id'])
      rack_env = headers.to_h { |name, value| ["HTTP_#{name.upcase.tr('-', '_')}", value] }
      assert_equal event['id'], CrmClient.verify_webhook(body, rack_env, endpoint['secret'].delete_prefix('whsec_'))['id']
      other = hooks.create({ url: 'http://127.0.0.1:9/never', enabled: false })
      assert_raises(CrmClient::WebhookVerificationError) { CrmClient.verify_webhook(body, headers, other['secret']) }
      assert_nil hooks.delete(other['id'])
      assert_raises(CrmClient::NotFound) { hooks.get(other['id']) }

      # Resent by hand: the same event (the same webhook-id) arrives again.
      assert_equal event['id'], @crm.events.resend(event['id'], endpoint['id'])['id']
      again_headers, again_body = deliveries_of.call(customer['id'], 2)[1]
      assert_equal event['id'], CrmClient.verify_webhook(again_body, again_headers, endpoint['secret'])['id']

      # After a rotation, deliveries carry two signatures: the new secret and the old one verify.
      rotated = hooks.rotate_secret(endpoint['id'])
      refute_equal endpoint['secret'], rotated['secret']
      later = @crm.customers.create({ name: 'Rb Hooked after rotation' })
      headers, body = deliveries_of.call(later['id']).first
      assert_equal 2, headers['webhook-signature'].split.size
      assert_equal later, CrmClient.verify_webhook(body, headers, rotated['secret'])['data']['object']
      assert_equal later, CrmClient.verify_webhook(body, headers, endpoint['secret'])['data']['object']

      changed = hooks.update(endpoint['id'], { description: nil, event_types: [] })
      assert_equal [nil, []], changed.values_at('description', 'event_types')
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 10
      log = hooks.deliveries(endpoint['id'], limit: 100)['data']
      log = hooks.deliveries(endpoint['id'], limit: 100)['data'] while log.size < 3 && Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
      assert_equal 2, log.count { |a| a['event_id'] == event['id'] }
      assert_equal [204, nil], log.first.values_at('status_code', 'error')
    ensure
      hooks.delete(endpoint['id'])
      server.close
      thread.join(1)
    end
  end
end

# CrmClient.verify_webhook on fixed vectors: the specification's example, and deliveries signed
# here with OpenSSL::HMAC.
class VerifyWebhookTest < Minitest::Test
  SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
  OTHER = 'whsec_bm90IHRoZSBzZWNyZXQgb2YgdGhpcyBlbmRwb2ludA=='
  ID = 'evt_0123456789abcdef0123456789abcdef'
  NOW = Time.at(1_700_000_000)
  BODY = JSON.generate({ id: ID, type: 'customer.created', created_at: '2023-11-14T22:13:20.000Z', data: { object: { id: 'c1', name: 'Ada' } }, request_id: 'r1' })

  def sign(secret, timestamp = NOW.to_i, body = BODY, id = ID)
    key = secret.delete_prefix('whsec_').unpack1('m0')
    "v1,#{[OpenSSL::HMAC.digest('SHA256', key, "#{id}.#{timestamp}.#{body}")].pack('m0')}"
  end

  def headers(signature, timestamp = NOW.to_i, id = ID)
    { 'webhook-id' => id, 'webhook-timestamp' => timestamp.to_s, 'webhook-signature' => signature }
  end

  def verify(body, headers, secret = SECRET, now: NOW)
    CrmClient.verify_webhook(body, headers, secret, now: now)
  end

  def test_the_specifications_example
    example = { 'webhook-id' => 'msg_p5jXN8AQM9LWM0D4loKWxJek', 'webhook-timestamp' => '1614265330', 'webhook-signature' => 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=' }
    assert_equal({ 'test' => 2_432_232_314 }, verify('{"test": 2432232314}', example, now: Time.at(1_614_265_330)))
    assert_raises(CrmClient::WebhookVerificationError) { verify('{"test": 2432232314}', example, now: Time.at(1_614_265_330 + 301)) }
  end

  def test_valid
    assert_equal JSON.parse(BODY), verify(BODY, headers(sign(SECRET)))
    assert_equal ID, verify(BODY, headers(sign(SECRET)), SECRET.delete_prefix('whsec_'))['id']
    assert_equal ID, verify(BODY, { 'Webhook-Id' => ID, 'WEBHOOK-TIMESTAMP' => NOW.to_i.to_s, 'Webhook-Signature' => [sign(SECRET)] })['id']
    assert_equal ID, verify(BODY, { 'HTTP_WEBHOOK_ID' => ID, 'HTTP_WEBHOOK_TIMESTAMP' => NOW.to_i.to_s, 'HTTP_WEBHOOK_SIGNATURE' => sign(SECRET) })['id']
    assert_equal ID, verify(BODY, headers(sign(SECRET)), now: NOW + 299)['id']
    assert_equal ID, verify(BODY, headers(sign(SECRET)), now: NOW - 299)['id']
  end

  def test_tampered_body_or_headers
    [[BODY.sub('Ada', 'Eve'), headers(sign(SECRET))], ["#{BODY} ", headers(sign(SECRET))],
     [BODY, headers(sign(SECRET), NOW.to_i + 1)], [BODY, headers(sign(SECRET), NOW.to_i, "evt_#{'f' * 32}")]].each do |body, tampered|
      assert_raises(CrmClient::WebhookVerificationError) { verify(body, tampered) }
    end
  end

  def test_wrong_secret
    assert_raises(CrmClient::WebhookVerificationError) { verify(BODY, headers(sign(SECRET)), OTHER) }
    assert_raises(CrmClient::WebhookVerificationError) { verify(BODY, headers(sign(OTHER))) }
  end

  def test_stale_or_future_timestamp
    [NOW.to_i - 301, NOW.to_i + 301].each do |timestamp|
      assert_raises(CrmClient::WebhookVerificationError) { verify(BODY, headers(sign(SECRET, timestamp), timestamp)) }
    end
    stale = Time.now.to_i - 600 # real time by default
    error = assert_raises(CrmClient::WebhookVerificationError) { CrmClient.verify_webhook(BODY, headers(sign(SECRET, stale), stale), SECRET) }
    assert_match(/too old/, error.message)
  end

  def test_two_signatures_the_second_matching
    two = "#{sign(OTHER)} #{sign(SECRET)}"
    assert_equal ID, verify(BODY, headers(two))['id']
    assert_equal ID, verify(BODY, headers(two), OTHER)['id']
    mixed = "v2,#{sign(SECRET)[3..]} v1,not*base64 v1 #{sign(SECRET)}"
    assert_equal ID, verify(BODY, headers(mixed))['id']
    assert_raises(CrmClient::WebhookVerificationError) { verify(BODY, headers("v2,#{sign(SECRET)[3..]}")) }
  end

  def test_missing_headers_parsed_body_bad_secret
    assert_raises(CrmClient::WebhookVerificationError) { verify(BODY, { 'webhook-id' => ID, 'webhook-timestamp' => NOW.to_i.to_s }) }
    assert_raises(CrmClient::WebhookVerificationError) { verify(BODY, headers(sign(SECRET)).merge('webhook-timestamp' => 'soon')) }
    assert_raises(TypeError) { verify(JSON.parse(BODY), headers(sign(SECRET))) }
    assert_raises(ArgumentError) { verify(BODY, headers(sign(SECRET)), 'whsec_') }
    assert CrmClient::WebhookVerificationError < StandardError
  end
end
