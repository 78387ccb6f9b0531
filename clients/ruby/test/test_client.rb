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
    assert_equal({ 'page' => 1, 'limit' => 5, 'total' => 1 }, page['pagination'])
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

  def test_covers_every_route_of_the_openapi_document
    document = JSON.parse(Net::HTTP.get(URI("#{ENV['CRM_BASE_URL']}/openapi.json")))
    document['paths'].each do |path, methods|
      resource = @crm.public_send(path.split('/')[1])
      methods.each_key do |method|
        name = method == 'post' ? :create : (path.end_with?('{id}') ? :get : :list)
        assert resource.respond_to?(name), "#{method} #{path}"
        assert resource.instance_variable_get(:@creatable), "#{method} #{path}" if method == 'post'
      end
    end
  end
end
