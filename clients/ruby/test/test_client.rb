# Runs against a real server: CRM_BASE_URL, CRM_API_KEY, CRM_READONLY_KEY, CRM_LIMITED_BASE_URL, CRM_LIMITED_KEY.
require 'minitest/autorun'
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

  def test_covers_every_route_of_the_openapi_document
    document = JSON.parse(Net::HTTP.get(URI("#{ENV['CRM_BASE_URL']}/openapi.json")))
    document['paths'].each do |path, methods|
      _, name, id, action = path.split('/')
      resource = @crm.public_send(name)
      methods.each_key do |method|
        operation = case method
                    when 'get' then id ? :get : :list
                    when 'post' then id.nil? ? :create : (action == 'restore' ? :restore : :transition)
                    else { 'patch' => :update, 'delete' => :delete }.fetch(method)
                    end
        assert resource.respond_to?(operation), "#{method} #{path}"
        assert resource.instance_variable_get(:@editable), "#{method} #{path}" if operation == :update
        assert_includes resource.instance_variable_get(:@moves), action, "#{method} #{path}" if operation == :transition
      end
    end
  end
end
